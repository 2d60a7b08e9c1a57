Rails.application.routes.draw do
  post "/count_up", to: "counters#count_up"
  get "/count", to: "counters#show"
end
