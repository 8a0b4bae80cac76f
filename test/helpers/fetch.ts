/**
 * Raw nice-grpc clients of the fetch surface (ExternalTaskService and
 * OperatorService) on a test node's channel, and small helpers around them.
 */
import { ClientError, createClient } from 'nice-grpc';
import { ExternalTaskServiceDefinition, OperatorServiceDefinition, type pb } from '../../src/wire';
import type { TestNode } from './node';

export type ExternalClient = ReturnType<typeof createClient<typeof ExternalTaskServiceDefinition>>;
export type OperatorClient = ReturnType<typeof createClient<typeof OperatorServiceDefinition>>;

export function fetchClients(t: TestNode): { external: ExternalClient; operator: OperatorClient } {
  return {
    external: createClient(ExternalTaskServiceDefinition, t.channel),
    operator: createClient(OperatorServiceDefinition, t.channel),
  };
}

export const topic = (over: Partial<pb.ITopic> = {}): pb.ITopic => ({ tenant: 'acme', flow_type: 'order', step_type: 'charge', ...over });

export function step(over: Partial<pb.IStepSpec> = {}): pb.IStepSpec {
  return {
    tenant: 'acme', flow_id: 'f1', flow_type: 'order', step_type: 'charge', step_execution_id: 's1',
    input: Buffer.from('in'), ...over,
  };
}

/** The error a call failed with (a ClientError), or a failure when it succeeded. */
export async function failureOf(call: Promise<unknown>): Promise<ClientError> {
  const err = await call.then(() => undefined, (e: unknown) => e);
  if (!(err instanceof ClientError)) throw new Error(`expected the call to fail with a ClientError, got ${String(err)}`);
  return err;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
