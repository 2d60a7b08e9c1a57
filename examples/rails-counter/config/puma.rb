# Rails 8's generated config/puma.rb: 3 threads (RAILS_MAX_THREADS), one process. The port and
# address come from persistlab (loopback only).
threads_count = ENV.fetch("RAILS_MAX_THREADS") { 3 }
threads threads_count, threads_count
bind "tcp://#{ENV.fetch("BIND", "127.0.0.1")}:#{ENV.fetch("PORT")}"
environment "production"
# Requests Puma serves inline from one keep-alive connection (waiting up to 0.2 s for each) before
# the connection goes back to its reactor, behind the others: Puma's default 10. PUMA_MAX_FAST_INLINE=0
# hands every connection back whenever others wait (first come, first served).
max_fast_inline Integer(ENV.fetch("PUMA_MAX_FAST_INLINE", "10"))
