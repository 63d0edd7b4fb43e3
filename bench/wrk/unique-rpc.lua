-- The same search as unique-search.lua, posted straight to a node's /public/ endpoint
-- (the item offset 0 and page size 21 that the service sends for page 0 of 20).
local prefix = 'direct' .. os.time() .. 'n'
local count = 0

request = function()
  count = count + 1
  local body = '{"method":"search","params":["' .. prefix .. count .. '","posts",0,0,21]}'
  return wrk.format('POST', '/public/', { ['Content-Type'] = 'application/json' }, body)
end
