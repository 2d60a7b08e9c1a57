# Rails 8's SQLite3 adapter sets these pragmas on every connection (activerecord 8.0,
# sqlite3_adapter.rb DEFAULT_PRAGMAS); Rails 6.1 sets none of them, so SQLite's defaults
# (journal_mode DELETE, synchronous FULL) would run instead of what the seed's app ran.
module Rails8SQLitePragmas
  PRAGMAS = {
    "foreign_keys" => true,
    "journal_mode" => :wal,
    "synchronous" => :normal,
    "mmap_size" => 134_217_728,
    "journal_size_limit" => 67_108_864,
    "cache_size" => 2000,
  }.freeze

  # Rails 8 points database.yml's timeout at sqlite3 2.x's busy_handler_timeout (rails/rails
  # #51958): a thread waiting for SQLite's lock sleeps 1 ms at a time with Ruby's GVL released, so
  # the thread holding the lock runs on. 6.1 uses SQLite's busy_timeout, which waits holding the GVL.
  # This is sqlite3 2.x's handler, in Ruby as it is there.
  def configure_connection
    super
    PRAGMAS.each { |name, value| execute("PRAGMA #{name} = #{value}", "SCHEMA") }
    timeout = self.class.type_cast_config_to_integer(@config[:timeout]).to_i.fdiv(1000)
    deadline = nil
    @connection.busy_handler do |count|
      now = Process.clock_gettime(Process::CLOCK_MONOTONIC)
      if count.zero?
        deadline = now + timeout
      elsif now > deadline
        next false
      else
        sleep(0.001)
      end
      true
    end
  end
end

ActiveSupport.on_load(:active_record) do
  require "active_record/connection_adapters/sqlite3_adapter"
  ActiveRecord::ConnectionAdapters::SQLite3Adapter.prepend(Rails8SQLitePragmas)
end
