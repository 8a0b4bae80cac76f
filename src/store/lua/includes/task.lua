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
-- deadline, enqueuedAt, tenant, flowId, flowType, stepType, seid
local SPEC_OUTCOME =
  '^[^\30]*\30[^\30]*\30([^\30]*)\30([^\30]*)\30([^\30]*)\30([^\30]*)\30([^\30]*)\30([^\30]*)\30([^\30]*)\30'
-- flowId, seid
local SPEC_FLOW_SEID =
  '^[^\30]*\30[^\30]*\30[^\30]*\30[^\30]*\30[^\30]*\30([^\30]*)\30[^\30]*\30[^\30]*\30([^\30]*)\30'
-- maxAttempts, initialInterval, backoffCoefficient, maxInterval, nonRetryable
local SPEC_RETRY =
  '^[^\30]*\30[^\30]*\30[^\30]*\30[^\30]*\30[^\30]*\30[^\30]*\30[^\30]*\30[^\30]*\30[^\30]*\30([^\30]*)\30([^\30]*)\30([^\30]*)\30([^\30]*)\30([^\30]*)\30'
