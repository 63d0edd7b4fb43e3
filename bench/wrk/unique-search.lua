-- A search for a keyword never asked before on every request: the cache cannot help.
local count = 0

request = function()
  count = count + 1
  return wrk.format('GET', '/api/search?keyword=unique' .. count .. '&page=0&pageSize=20')
end
