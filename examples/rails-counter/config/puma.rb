# Rails 8's generated config/puma.rb: 3 threads (RAILS_MAX_THREADS), one process. The port and
# address come from persistlab (loopback only).
threads_count = ENV.fetch("RAILS_MAX_THREADS") { 3 }
threads threads_count, threads_count
bind "tcp://#{ENV.fetch("BIND", "127.0.0.1")}:#{ENV.fetch("PORT")}"
environment "production"
