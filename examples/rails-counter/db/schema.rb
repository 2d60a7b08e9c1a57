ActiveRecord::Schema.define(version: 1) do
  create_table "counters", id: :string, force: :cascade do |t|
    t.integer "count", default: 0, null: false
  end
end
