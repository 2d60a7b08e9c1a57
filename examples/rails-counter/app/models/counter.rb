class Counter < ApplicationRecord
end
