-- A search for a keyword never asked before on every request: the cache cannot help.
-- Keywords carry the start time, so that a second run on the same service is cold too.
local prefix = 'unique' .. os.time() .. 'n'
local count = 0

request = function()
  count = count + 1
  return wrk.format('GET', '/api/search?keyword=' .. prefix .. count .. '&page=0&pageSize=20')
end
