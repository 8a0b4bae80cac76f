/**
 * The keys the gateway indexes its slots by, and the set-valued maps it keeps
 * them in. A tenant is part of every key: two tenants may use the same names.
 */

/** (tenant, flowType): the slots of a flow type. */
export const flowKey = (tenant: string, flowType: string) => `${tenant}\0${flowType}`;

/** (tenant, appWorkerId): the streams of one app worker. */
export const workerKey = (tenant: string, appWorkerId: string) => `${tenant}\0${appWorkerId}`;

export function addTo<K, V>(map: Map<K, Set<V>>, key: K, value: V): void {
  let set = map.get(key);
  if (!set) map.set(key, (set = new Set()));
  set.add(value);
}

export function removeFrom<K, V>(map: Map<K, Set<V>>, key: K, value: V): void {
  const set = map.get(key);
  if (set?.delete(value) && set.size === 0) map.delete(key);
}
