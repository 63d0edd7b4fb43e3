-- GETs the paths listed in the file given as the first argument, in order, once: the thread
-- stops when every path has been answered (wrk runs one thread here). Requests sent past the
-- end of the list, while the last ones are in flight, repeat the last path.
local paths = {}
local sent = 0
local answered = 0

init = function(args)
  for line in io.lines(args[1]) do paths[#paths + 1] = line end
end

request = function()
  sent = sent + 1
  return wrk.format('GET', paths[math.min(sent, #paths)])
end

response = function()
  answered = answered + 1
  if answered >= #paths then wrk.thread:stop() end
end
