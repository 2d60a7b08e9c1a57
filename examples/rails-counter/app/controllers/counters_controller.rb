# The seed's app: each POST /count_up adds one with update_all("count = count + 1") and answers the
# count as {"count":4856}. GET /count reads it (readiness, and the count a recovery holds: 0 where
# the row itself was lost, as when an instance dies before Litestream first replicated it).
class CountersController < ApplicationController
  def count_up
    Counter.where(id: "count_up").update_all("count = count + 1")
    render json: { count: Counter.find("count_up").count }
  end

  def show
    render json: { count: Counter.find_by(id: "count_up")&.count || 0 }
  end
end
