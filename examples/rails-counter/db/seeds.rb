Counter.find_or_create_by!(id: "count_up") { |c| c.count = 0 }
