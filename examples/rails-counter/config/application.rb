# Seed 000's counter as a minimal Rails app: one model, update_all on one row, {"count":N}.
# Debian 12 ships Rails 6.1; where Rails 8 (the seed's) does otherwise for SQLite and Puma, this
# app does as Rails 8 does (see config/initializers/rails8_sqlite.rb, config/puma.rb and README).
require_relative "boot"

require "rails"
require "active_record/railtie"
require "action_controller/railtie"

module RailsCounter
  class Application < Rails::Application
    config.load_defaults 6.1
    # rails new --api: a JSON endpoint that k6's bare POST reaches (no CSRF token, no session).
    config.api_only = true
    config.eager_load = true
    config.cache_classes = true
    # Rails 8's production log: to standard output, at info.
    config.logger = ActiveSupport::Logger.new($stdout)
    config.log_level = :info
    config.secret_key_base = ENV.fetch("SECRET_KEY_BASE") { SecureRandom.hex(64) }
  end
end

# Never rewrite db/schema.rb on a machine that runs the app (Rails 8's production default).
Rails.application.config.active_record.dump_schema_after_migration = false
