-- GETs the paths listed in the file given as the first argument, in order, round and round.
local paths = {}
local next_path = 1

init = function(args)
  for line in io.lines(args[1]) do paths[#paths + 1] = line end
end

request = function()
  local path = paths[next_path]
  next_path = next_path % #paths + 1
  return wrk.format('GET', path)
end
