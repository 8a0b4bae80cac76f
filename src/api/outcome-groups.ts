/**
 * MatchingService.ListOutcomeGroups and DropOutcomeGroup: operators find and
 * drop abandoned outcome consumer groups (docs/operations.md), which would
 * otherwise keep every partition's outcome stream from being trimmed.
 */
import type { CallContext } from 'nice-grpc';
import { principalOf } from '../auth/auth';
import type { Config } from '../config';
import { zdError } from '../errors';
import type { Keys } from '../store/keys';
import {
  describeOutcomeGroups, dropOutcomeGroup, outcomeGroupKey, splitOutcomeGroupKey, type OutcomeGroupInfo,
} from '../store/outcome-groups';
import type { OutcomeStore } from '../store/outcomes';
import type { RedisClient } from '../store/redis';
import type { Logger } from '../util/logger';
import type { pb } from '../wire';
import { requireId, requireName } from './validation';

/** A group a consumer read more recently than this is not dropped unless forced. */
export const ACTIVE_GROUP_MS = 10 * 60_000;

export interface OutcomeGroupDeps {
  config: Config;
  redis: RedisClient;
  keys: Keys;
  outcomes: OutcomeStore;
  log: Logger;
}

/** The auth middleware refuses non-operators already; each handler checks again so it fails closed on its own. */
function requireOperator(ctx: CallContext, method: string): void {
  if (!principalOf(ctx).operator) throw zdError('ZD_OPERATOR_SCOPE_REQUIRED', { method });
}

function groupToWire(g: OutcomeGroupInfo): pb.IOutcomeGroupInfo {
  return {
    ...splitOutcomeGroupKey(g.name), lag: g.lag ?? -1, pending: g.pending, consumers: g.consumers, idle_ms: g.idleMs ?? -1,
    partitions: g.partitions, registered: g.registered,
  };
}

export function outcomeGroupHandlers(d: OutcomeGroupDeps) {
  const c = d.config;
  const partitions = c.cluster.partitions;
  return {
    async listOutcomeGroups(_req: pb.ListOutcomeGroupsRequest, ctx: CallContext): Promise<pb.IListOutcomeGroupsResponse> {
      requireOperator(ctx, 'ListOutcomeGroups');
      return { groups: (await describeOutcomeGroups(d.redis, d.keys, partitions)).map(groupToWire) };
    },

    async dropOutcomeGroup(req: pb.DropOutcomeGroupRequest, ctx: CallContext): Promise<pb.IDropOutcomeGroupResponse> {
      requireOperator(ctx, 'DropOutcomeGroup');
      const tenant = req.tenant ? requireName('tenant', req.tenant, c.matching.maxQueueLength, 'matching.maxQueueLength') : '';
      // Any group name ListOutcomeGroups lists, not only those ConsumeOutcomes makes: a group made
      // by hand may hold ':' or a space and holds the trim just the same. It is only looked up
      // among the groups that exist, never made.
      const group = requireId('group', req.group);
      const name = outcomeGroupKey(tenant, group);
      const label = tenant ? `${group} of tenant ${tenant}` : group;
      const info = (await describeOutcomeGroups(d.redis, d.keys, partitions)).find((g) => g.name === name);
      if (!info) throw zdError('ZD_OUTCOME_GROUP_NOT_FOUND', { group: label });
      if (!req.force && info.idleMs !== undefined && info.idleMs < ACTIVE_GROUP_MS) {
        throw zdError('ZD_OUTCOME_GROUP_ACTIVE', { group: label, idleMs: info.idleMs, activeMs: ACTIVE_GROUP_MS });
      }
      const dropped = await dropOutcomeGroup(d.redis, d.keys, partitions, info);
      // Dropped meanwhile by another operator: nothing matched, so not a success.
      if (!dropped) throw zdError('ZD_OUTCOME_GROUP_NOT_FOUND', { group: label });
      d.outcomes.forgetGroup(name);
      d.log.warn({ group: name, partitions: dropped.partitions, pending: dropped.pending }, 'outcome consumer group dropped by an operator');
      return { partitions: dropped.partitions, pending: dropped.pending };
    },
  };
}
