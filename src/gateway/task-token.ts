/**
 * The opaque task token on the wire: partition, task id, attempt and start
 * nonce, so a result names exactly the attempt it answers.
 */
export interface TokenParts {
  partition: number;
  taskId: string;
  attempt: number;
  nonce: string;
}

export function encodeToken(t: TokenParts): string {
  return `${t.partition}.${t.taskId}.${t.attempt}.${t.nonce}`;
}

export function decodeToken(token: string): TokenParts | undefined {
  const m = /^(\d{1,6})\.(\d{1,6}-[0-9a-f]{24})\.(\d{1,9})\.([0-9a-f]{16})$/.exec(token);
  if (!m) return undefined;
  return { partition: Number(m[1]), taskId: m[2]!, attempt: Number(m[3]), nonce: m[4]! };
}
