# Debian's packaged gems, no Bundler (what `apt-get install ruby-railties ...` gives): activate
# the Rails gems by hand, so that `rails/commands` is found in railties, not looked up among
# Debian's vendor_ruby/rails files (which it is not, from some working directories).
gem "railties"
gem "activerecord"
gem "actionpack"
