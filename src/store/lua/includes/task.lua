-- A task's spec: what enqueue was given that never changes, in the task hash's
-- `spec` field as one string (src/store/task-spec.ts writes it):
--   methodTimeout, hbTimeout, deadline, enqueuedAt, tenant, flowId, flowType,
--   stepType, seid, maxAttempts, initialInterval, backoffCoefficient, maxInterval,
--   nonRetryable, sticky
-- each but the last followed by a \30 byte (a control character, which request
-- validation never lets into any of these values). One field instead of
-- fifteen: a small hash is a list that every field read or write searches.
--
-- A task enqueued before the spec was packed has these as fields of their own:
-- legacySpec builds the same string from them.
local function legacySpec(taskKey)
  local f = redis.call('HMGET', taskKey, 'methodTimeout', 'hbTimeout', 'deadline', 'enqueuedAt', 'tenant', 'flowId',
    'flowType', 'stepType', 'seid', 'maxAttempts', 'initialInterval', 'backoffCoefficient', 'maxInterval',
    'nonRetryable', 'sticky')
  for i = 1, 15 do f[i] = f[i] or '' end
  return table.concat(f, '\30')
end

-- string.match patterns over a spec
-- methodTimeout, hbTimeout
local SPEC_TIMEOUTS = '^([^\30]*)\30([^\30]*)\30'
-- deadline
local SPEC_DEADLINE = '^[^\30]*\30[^\30]*\30([^\30]*)\30'
-- methodTimeout, hbTimeout, deadline (a start: one match for all three)
local SPEC_START = '^([^\30]*)\30([^\30]*)\30([^\30]*)\30'
-- deadline, enqueuedAt, tenant, flowId, flowType, stepType, seid
local SPEC_OUTCOME =
  '^[^\30]*\30[^\30]*\30([^\30]*)\30([^\30]*)\30([^\30]*)\30([^\30]*)\30([^\30]*)\30([^\30]*)\30([^\30]*)\30'
-- sticky (the request's sticky worker, the last value)
local SPEC_STICKY = '([^\30]*)$'
-- flowId, seid
local SPEC_FLOW_SEID =
  '^[^\30]*\30[^\30]*\30[^\30]*\30[^\30]*\30[^\30]*\30([^\30]*)\30[^\30]*\30[^\30]*\30([^\30]*)\30'
-- maxAttempts, initialInterval, backoffCoefficient, maxInterval, nonRetryable
local SPEC_RETRY =
  '^[^\30]*\30[^\30]*\30[^\30]*\30[^\30]*\30[^\30]*\30[^\30]*\30[^\30]*\30[^\30]*\30[^\30]*\30([^\30]*)\30([^\30]*)\30([^\30]*)\30([^\30]*)\30([^\30]*)\30'

-- A running attempt's slot, node, boot id and start time (src/store/layout.ts).
-- Layout 2 keeps them in one field `run`, "slot\30node\30boot\30startedAt";
-- layout 1 (earlier versions, and while a member of the cluster reads only
-- that) in four fields of their own. runningOf reads either: pass the `run`
-- field, then the four.
local RUN_FIELDS = '^([^\30]*)\30([^\30]*)\30([^\30]*)\30([^\30]*)$'
local function runningOf(run, slot, node, boot, startedAt)
  if run then return string.match(run, RUN_FIELDS) end
  return slot, node, boot, startedAt
end
