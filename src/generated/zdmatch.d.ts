import * as $protobuf from "protobufjs";
import Long = require("long");

export namespace zdmatch {

    namespace v1 {

        interface IRetryPolicy extends zdmatch.v1.RetryPolicy.$Properties {
        }

        class RetryPolicy {
            constructor(p?: zdmatch.v1.RetryPolicy.$Properties);
            $unknowns?: Uint8Array[];
            max_attempts: number;
            initial_interval_ms: number;
            backoff_coefficient: number;
            max_interval_ms: number;
            non_retryable: string[];
            static create(properties: zdmatch.v1.RetryPolicy.$Shape): zdmatch.v1.RetryPolicy & zdmatch.v1.RetryPolicy.$Shape;
            static create(properties?: zdmatch.v1.RetryPolicy.$Properties): zdmatch.v1.RetryPolicy;
            static encode(m: zdmatch.v1.RetryPolicy.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.RetryPolicy.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.RetryPolicy & zdmatch.v1.RetryPolicy.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.RetryPolicy & zdmatch.v1.RetryPolicy.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.RetryPolicy;
            static toObject(m: zdmatch.v1.RetryPolicy, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace RetryPolicy {
            interface $Properties {
                max_attempts?: (number|null);
                initial_interval_ms?: (number|null);
                backoff_coefficient?: (number|null);
                max_interval_ms?: (number|null);
                non_retryable?: (string[]|null);
                $unknowns?: Uint8Array[];
            }
            type $Shape = zdmatch.v1.RetryPolicy.$Properties;
        }

        interface IFailure extends zdmatch.v1.Failure.$Properties {
        }

        class Failure {
            constructor(p?: zdmatch.v1.Failure.$Properties);
            $unknowns?: Uint8Array[];
            message: string;
            type: string;
            non_retryable: boolean;
            retry_after_ms: number;
            static create(properties: zdmatch.v1.Failure.$Shape): zdmatch.v1.Failure & zdmatch.v1.Failure.$Shape;
            static create(properties?: zdmatch.v1.Failure.$Properties): zdmatch.v1.Failure;
            static encode(m: zdmatch.v1.Failure.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.Failure.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.Failure & zdmatch.v1.Failure.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.Failure & zdmatch.v1.Failure.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.Failure;
            static toObject(m: zdmatch.v1.Failure, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace Failure {
            interface $Properties {
                message?: (string|null);
                type?: (string|null);
                non_retryable?: (boolean|null);
                retry_after_ms?: (number|null);
                $unknowns?: Uint8Array[];
            }
            type $Shape = zdmatch.v1.Failure.$Properties;
        }

        enum SlotKind {
            SLOT_KIND_UNSPECIFIED = 0,
            STEP_AND_RPC = 1,
            RPC_ONLY = 2
        }

        enum OutcomeStatus {
            OUTCOME_STATUS_UNSPECIFIED = 0,
            COMPLETED = 1,
            FAILED = 2,
            CANCELLED = 3,
            TIMED_OUT = 4
        }

        enum TaskState {
            TASK_STATE_UNSPECIFIED = 0,
            QUEUED = 1,
            RUNNING = 2,
            LOCKED = 3,
            TERMINAL = 4,
            DONE = 5
        }

        interface IOutcome extends zdmatch.v1.Outcome.$Properties {
        }

        class Outcome {
            constructor(p?: zdmatch.v1.Outcome.$Properties);
            $unknowns?: Uint8Array[];
            outcome_id: string;
            task_id: string;
            tenant: string;
            flow_id: string;
            flow_type: string;
            step_type: string;
            step_execution_id: string;
            status: zdmatch.v1.OutcomeStatus;
            attempt: number;
            app_worker_id: string;
            output: Uint8Array;
            error?: (zdmatch.v1.Failure.$Properties|null);
            idempotency_key: string;
            finished_at_ms: number;
            enqueued_at_ms: number;
            static create(properties: zdmatch.v1.Outcome.$Shape): zdmatch.v1.Outcome & zdmatch.v1.Outcome.$Shape;
            static create(properties?: zdmatch.v1.Outcome.$Properties): zdmatch.v1.Outcome;
            static encode(m: zdmatch.v1.Outcome.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.Outcome.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.Outcome & zdmatch.v1.Outcome.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.Outcome & zdmatch.v1.Outcome.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.Outcome;
            static toObject(m: zdmatch.v1.Outcome, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace Outcome {
            interface $Properties {
                outcome_id?: (string|null);
                task_id?: (string|null);
                tenant?: (string|null);
                flow_id?: (string|null);
                flow_type?: (string|null);
                step_type?: (string|null);
                step_execution_id?: (string|null);
                status?: (zdmatch.v1.OutcomeStatus|null);
                attempt?: (number|null);
                app_worker_id?: (string|null);
                output?: (Uint8Array|null);
                error?: (zdmatch.v1.Failure.$Properties|null);
                idempotency_key?: (string|null);
                finished_at_ms?: (number|null);
                enqueued_at_ms?: (number|null);
                $unknowns?: Uint8Array[];
            }
            type $Shape = zdmatch.v1.Outcome.$Properties;
        }

        interface ITopic extends zdmatch.v1.Topic.$Properties {
        }

        class Topic {
            constructor(p?: zdmatch.v1.Topic.$Properties);
            $unknowns?: Uint8Array[];
            tenant: string;
            flow_type: string;
            step_type: string;
            static create(properties: zdmatch.v1.Topic.$Shape): zdmatch.v1.Topic & zdmatch.v1.Topic.$Shape;
            static create(properties?: zdmatch.v1.Topic.$Properties): zdmatch.v1.Topic;
            static encode(m: zdmatch.v1.Topic.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.Topic.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.Topic & zdmatch.v1.Topic.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.Topic & zdmatch.v1.Topic.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.Topic;
            static toObject(m: zdmatch.v1.Topic, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace Topic {
            interface $Properties {
                tenant?: (string|null);
                flow_type?: (string|null);
                step_type?: (string|null);
                $unknowns?: Uint8Array[];
            }
            type $Shape = zdmatch.v1.Topic.$Properties;
        }

        interface IFetchAndLockRequest extends zdmatch.v1.FetchAndLockRequest.$Properties {
        }

        class FetchAndLockRequest {
            constructor(p?: zdmatch.v1.FetchAndLockRequest.$Properties);
            $unknowns?: Uint8Array[];
            worker_id: string;
            topics: zdmatch.v1.Topic.$Properties[];
            max_tasks: number;
            lock_duration_ms: number;
            wait_ms: number;
            static create(properties: zdmatch.v1.FetchAndLockRequest.$Shape): zdmatch.v1.FetchAndLockRequest & zdmatch.v1.FetchAndLockRequest.$Shape;
            static create(properties?: zdmatch.v1.FetchAndLockRequest.$Properties): zdmatch.v1.FetchAndLockRequest;
            static encode(m: zdmatch.v1.FetchAndLockRequest.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.FetchAndLockRequest.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.FetchAndLockRequest & zdmatch.v1.FetchAndLockRequest.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.FetchAndLockRequest & zdmatch.v1.FetchAndLockRequest.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.FetchAndLockRequest;
            static toObject(m: zdmatch.v1.FetchAndLockRequest, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace FetchAndLockRequest {
            interface $Properties {
                worker_id?: (string|null);
                topics?: (zdmatch.v1.Topic.$Properties[]|null);
                max_tasks?: (number|null);
                lock_duration_ms?: (number|null);
                wait_ms?: (number|null);
                $unknowns?: Uint8Array[];
            }
            type $Shape = zdmatch.v1.FetchAndLockRequest.$Properties;
        }

        interface ILockedTask extends zdmatch.v1.LockedTask.$Properties {
        }

        class LockedTask {
            constructor(p?: zdmatch.v1.LockedTask.$Properties);
            $unknowns?: Uint8Array[];
            task_id: string;
            topic?: (zdmatch.v1.Topic.$Properties|null);
            flow_id: string;
            step_execution_id: string;
            input: Uint8Array;
            lock_until_ms: number;
            retries: number;
            attempt: number;
            static create(properties: zdmatch.v1.LockedTask.$Shape): zdmatch.v1.LockedTask & zdmatch.v1.LockedTask.$Shape;
            static create(properties?: zdmatch.v1.LockedTask.$Properties): zdmatch.v1.LockedTask;
            static encode(m: zdmatch.v1.LockedTask.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.LockedTask.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.LockedTask & zdmatch.v1.LockedTask.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.LockedTask & zdmatch.v1.LockedTask.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.LockedTask;
            static toObject(m: zdmatch.v1.LockedTask, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace LockedTask {
            interface $Properties {
                task_id?: (string|null);
                topic?: (zdmatch.v1.Topic.$Properties|null);
                flow_id?: (string|null);
                step_execution_id?: (string|null);
                input?: (Uint8Array|null);
                lock_until_ms?: (number|null);
                retries?: (number|null);
                attempt?: (number|null);
                $unknowns?: Uint8Array[];
            }
            type $Shape = zdmatch.v1.LockedTask.$Properties;
        }

        interface IFetchAndLockResponse extends zdmatch.v1.FetchAndLockResponse.$Properties {
        }

        class FetchAndLockResponse {
            constructor(p?: zdmatch.v1.FetchAndLockResponse.$Properties);
            $unknowns?: Uint8Array[];
            tasks: zdmatch.v1.LockedTask.$Properties[];
            static create(properties: zdmatch.v1.FetchAndLockResponse.$Shape): zdmatch.v1.FetchAndLockResponse & zdmatch.v1.FetchAndLockResponse.$Shape;
            static create(properties?: zdmatch.v1.FetchAndLockResponse.$Properties): zdmatch.v1.FetchAndLockResponse;
            static encode(m: zdmatch.v1.FetchAndLockResponse.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.FetchAndLockResponse.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.FetchAndLockResponse & zdmatch.v1.FetchAndLockResponse.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.FetchAndLockResponse & zdmatch.v1.FetchAndLockResponse.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.FetchAndLockResponse;
            static toObject(m: zdmatch.v1.FetchAndLockResponse, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace FetchAndLockResponse {
            interface $Properties {
                tasks?: (zdmatch.v1.LockedTask.$Properties[]|null);
                $unknowns?: Uint8Array[];
            }
            type $Shape = zdmatch.v1.FetchAndLockResponse.$Properties;
        }

        interface ICompleteRequest extends zdmatch.v1.CompleteRequest.$Properties {
        }

        class CompleteRequest {
            constructor(p?: zdmatch.v1.CompleteRequest.$Properties);
            $unknowns?: Uint8Array[];
            task_id: string;
            worker_id: string;
            result: Uint8Array;
            has_result: boolean;
            idempotency_key: string;
            static create(properties: zdmatch.v1.CompleteRequest.$Shape): zdmatch.v1.CompleteRequest & zdmatch.v1.CompleteRequest.$Shape;
            static create(properties?: zdmatch.v1.CompleteRequest.$Properties): zdmatch.v1.CompleteRequest;
            static encode(m: zdmatch.v1.CompleteRequest.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.CompleteRequest.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.CompleteRequest & zdmatch.v1.CompleteRequest.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.CompleteRequest & zdmatch.v1.CompleteRequest.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.CompleteRequest;
            static toObject(m: zdmatch.v1.CompleteRequest, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace CompleteRequest {
            interface $Properties {
                task_id?: (string|null);
                worker_id?: (string|null);
                result?: (Uint8Array|null);
                has_result?: (boolean|null);
                idempotency_key?: (string|null);
                $unknowns?: Uint8Array[];
            }
            type $Shape = zdmatch.v1.CompleteRequest.$Properties;
        }

        interface ICompleteResponse extends zdmatch.v1.CompleteResponse.$Properties {
        }

        class CompleteResponse {
            constructor(p?: zdmatch.v1.CompleteResponse.$Properties);
            $unknowns?: Uint8Array[];
            static create(properties: zdmatch.v1.CompleteResponse.$Shape): zdmatch.v1.CompleteResponse & zdmatch.v1.CompleteResponse.$Shape;
            static create(properties?: zdmatch.v1.CompleteResponse.$Properties): zdmatch.v1.CompleteResponse;
            static encode(m: zdmatch.v1.CompleteResponse.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.CompleteResponse.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.CompleteResponse & zdmatch.v1.CompleteResponse.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.CompleteResponse & zdmatch.v1.CompleteResponse.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.CompleteResponse;
            static toObject(m: zdmatch.v1.CompleteResponse, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace CompleteResponse {
            interface $Properties {
                $unknowns?: Uint8Array[];
            }
            type $Shape = zdmatch.v1.CompleteResponse.$Properties;
        }

        interface IFailRequest extends zdmatch.v1.FailRequest.$Properties {
        }

        class FailRequest {
            constructor(p?: zdmatch.v1.FailRequest.$Properties);
            $unknowns?: Uint8Array[];
            task_id: string;
            worker_id: string;
            failure?: (zdmatch.v1.Failure.$Properties|null);
            retries: number;
            retry_timeout_ms: number;
            static create(properties: zdmatch.v1.FailRequest.$Shape): zdmatch.v1.FailRequest & zdmatch.v1.FailRequest.$Shape;
            static create(properties?: zdmatch.v1.FailRequest.$Properties): zdmatch.v1.FailRequest;
            static encode(m: zdmatch.v1.FailRequest.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.FailRequest.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.FailRequest & zdmatch.v1.FailRequest.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.FailRequest & zdmatch.v1.FailRequest.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.FailRequest;
            static toObject(m: zdmatch.v1.FailRequest, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace FailRequest {
            interface $Properties {
                task_id?: (string|null);
                worker_id?: (string|null);
                failure?: (zdmatch.v1.Failure.$Properties|null);
                retries?: (number|null);
                retry_timeout_ms?: (number|null);
                $unknowns?: Uint8Array[];
            }
            type $Shape = zdmatch.v1.FailRequest.$Properties;
        }

        interface IFailResponse extends zdmatch.v1.FailResponse.$Properties {
        }

        class FailResponse {
            constructor(p?: zdmatch.v1.FailResponse.$Properties);
            $unknowns?: Uint8Array[];
            terminal: boolean;
            static create(properties: zdmatch.v1.FailResponse.$Shape): zdmatch.v1.FailResponse & zdmatch.v1.FailResponse.$Shape;
            static create(properties?: zdmatch.v1.FailResponse.$Properties): zdmatch.v1.FailResponse;
            static encode(m: zdmatch.v1.FailResponse.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.FailResponse.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.FailResponse & zdmatch.v1.FailResponse.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.FailResponse & zdmatch.v1.FailResponse.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.FailResponse;
            static toObject(m: zdmatch.v1.FailResponse, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace FailResponse {
            interface $Properties {
                terminal?: (boolean|null);
                $unknowns?: Uint8Array[];
            }
            type $Shape = zdmatch.v1.FailResponse.$Properties;
        }

        interface IExtendLockRequest extends zdmatch.v1.ExtendLockRequest.$Properties {
        }

        class ExtendLockRequest {
            constructor(p?: zdmatch.v1.ExtendLockRequest.$Properties);
            $unknowns?: Uint8Array[];
            task_id: string;
            worker_id: string;
            lock_duration_ms: number;
            static create(properties: zdmatch.v1.ExtendLockRequest.$Shape): zdmatch.v1.ExtendLockRequest & zdmatch.v1.ExtendLockRequest.$Shape;
            static create(properties?: zdmatch.v1.ExtendLockRequest.$Properties): zdmatch.v1.ExtendLockRequest;
            static encode(m: zdmatch.v1.ExtendLockRequest.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.ExtendLockRequest.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.ExtendLockRequest & zdmatch.v1.ExtendLockRequest.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.ExtendLockRequest & zdmatch.v1.ExtendLockRequest.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.ExtendLockRequest;
            static toObject(m: zdmatch.v1.ExtendLockRequest, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace ExtendLockRequest {
            interface $Properties {
                task_id?: (string|null);
                worker_id?: (string|null);
                lock_duration_ms?: (number|null);
                $unknowns?: Uint8Array[];
            }
            type $Shape = zdmatch.v1.ExtendLockRequest.$Properties;
        }

        interface IExtendLockResponse extends zdmatch.v1.ExtendLockResponse.$Properties {
        }

        class ExtendLockResponse {
            constructor(p?: zdmatch.v1.ExtendLockResponse.$Properties);
            $unknowns?: Uint8Array[];
            lock_until_ms: number;
            static create(properties: zdmatch.v1.ExtendLockResponse.$Shape): zdmatch.v1.ExtendLockResponse & zdmatch.v1.ExtendLockResponse.$Shape;
            static create(properties?: zdmatch.v1.ExtendLockResponse.$Properties): zdmatch.v1.ExtendLockResponse;
            static encode(m: zdmatch.v1.ExtendLockResponse.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.ExtendLockResponse.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.ExtendLockResponse & zdmatch.v1.ExtendLockResponse.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.ExtendLockResponse & zdmatch.v1.ExtendLockResponse.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.ExtendLockResponse;
            static toObject(m: zdmatch.v1.ExtendLockResponse, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace ExtendLockResponse {
            interface $Properties {
                lock_until_ms?: (number|null);
                $unknowns?: Uint8Array[];
            }
            type $Shape = zdmatch.v1.ExtendLockResponse.$Properties;
        }

        interface IUnlockRequest extends zdmatch.v1.UnlockRequest.$Properties {
        }

        class UnlockRequest {
            constructor(p?: zdmatch.v1.UnlockRequest.$Properties);
            $unknowns?: Uint8Array[];
            task_id: string;
            worker_id: string;
            static create(properties: zdmatch.v1.UnlockRequest.$Shape): zdmatch.v1.UnlockRequest & zdmatch.v1.UnlockRequest.$Shape;
            static create(properties?: zdmatch.v1.UnlockRequest.$Properties): zdmatch.v1.UnlockRequest;
            static encode(m: zdmatch.v1.UnlockRequest.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.UnlockRequest.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.UnlockRequest & zdmatch.v1.UnlockRequest.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.UnlockRequest & zdmatch.v1.UnlockRequest.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.UnlockRequest;
            static toObject(m: zdmatch.v1.UnlockRequest, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace UnlockRequest {
            interface $Properties {
                task_id?: (string|null);
                worker_id?: (string|null);
                $unknowns?: Uint8Array[];
            }
            type $Shape = zdmatch.v1.UnlockRequest.$Properties;
        }

        interface IUnlockResponse extends zdmatch.v1.UnlockResponse.$Properties {
        }

        class UnlockResponse {
            constructor(p?: zdmatch.v1.UnlockResponse.$Properties);
            $unknowns?: Uint8Array[];
            static create(properties: zdmatch.v1.UnlockResponse.$Shape): zdmatch.v1.UnlockResponse & zdmatch.v1.UnlockResponse.$Shape;
            static create(properties?: zdmatch.v1.UnlockResponse.$Properties): zdmatch.v1.UnlockResponse;
            static encode(m: zdmatch.v1.UnlockResponse.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.UnlockResponse.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.UnlockResponse & zdmatch.v1.UnlockResponse.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.UnlockResponse & zdmatch.v1.UnlockResponse.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.UnlockResponse;
            static toObject(m: zdmatch.v1.UnlockResponse, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace UnlockResponse {
            interface $Properties {
                $unknowns?: Uint8Array[];
            }
            type $Shape = zdmatch.v1.UnlockResponse.$Properties;
        }

        interface ITerminalTask extends zdmatch.v1.TerminalTask.$Properties {
        }

        class TerminalTask {
            constructor(p?: zdmatch.v1.TerminalTask.$Properties);
            $unknowns?: Uint8Array[];
            task_id: string;
            topic?: (zdmatch.v1.Topic.$Properties|null);
            flow_id: string;
            step_execution_id: string;
            attempt: number;
            reason: string;
            terminal_at_ms: number;
            last_error?: (zdmatch.v1.Failure.$Properties|null);
            lock_expiries: number;
            partition: number;
            static create(properties: zdmatch.v1.TerminalTask.$Shape): zdmatch.v1.TerminalTask & zdmatch.v1.TerminalTask.$Shape;
            static create(properties?: zdmatch.v1.TerminalTask.$Properties): zdmatch.v1.TerminalTask;
            static encode(m: zdmatch.v1.TerminalTask.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.TerminalTask.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.TerminalTask & zdmatch.v1.TerminalTask.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.TerminalTask & zdmatch.v1.TerminalTask.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.TerminalTask;
            static toObject(m: zdmatch.v1.TerminalTask, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace TerminalTask {
            interface $Properties {
                task_id?: (string|null);
                topic?: (zdmatch.v1.Topic.$Properties|null);
                flow_id?: (string|null);
                step_execution_id?: (string|null);
                attempt?: (number|null);
                reason?: (string|null);
                terminal_at_ms?: (number|null);
                last_error?: (zdmatch.v1.Failure.$Properties|null);
                lock_expiries?: (number|null);
                partition?: (number|null);
                $unknowns?: Uint8Array[];
            }
            type $Shape = zdmatch.v1.TerminalTask.$Properties;
        }

        interface IListTerminalTasksRequest extends zdmatch.v1.ListTerminalTasksRequest.$Properties {
        }

        class ListTerminalTasksRequest {
            constructor(p?: zdmatch.v1.ListTerminalTasksRequest.$Properties);
            $unknowns?: Uint8Array[];
            tenant: string;
            flow_type: string;
            step_type: string;
            limit: number;
            static create(properties: zdmatch.v1.ListTerminalTasksRequest.$Shape): zdmatch.v1.ListTerminalTasksRequest & zdmatch.v1.ListTerminalTasksRequest.$Shape;
            static create(properties?: zdmatch.v1.ListTerminalTasksRequest.$Properties): zdmatch.v1.ListTerminalTasksRequest;
            static encode(m: zdmatch.v1.ListTerminalTasksRequest.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.ListTerminalTasksRequest.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.ListTerminalTasksRequest & zdmatch.v1.ListTerminalTasksRequest.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.ListTerminalTasksRequest & zdmatch.v1.ListTerminalTasksRequest.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.ListTerminalTasksRequest;
            static toObject(m: zdmatch.v1.ListTerminalTasksRequest, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace ListTerminalTasksRequest {
            interface $Properties {
                tenant?: (string|null);
                flow_type?: (string|null);
                step_type?: (string|null);
                limit?: (number|null);
                $unknowns?: Uint8Array[];
            }
            type $Shape = zdmatch.v1.ListTerminalTasksRequest.$Properties;
        }

        interface IListTerminalTasksResponse extends zdmatch.v1.ListTerminalTasksResponse.$Properties {
        }

        class ListTerminalTasksResponse {
            constructor(p?: zdmatch.v1.ListTerminalTasksResponse.$Properties);
            $unknowns?: Uint8Array[];
            tasks: zdmatch.v1.TerminalTask.$Properties[];
            incomplete: boolean;
            static create(properties: zdmatch.v1.ListTerminalTasksResponse.$Shape): zdmatch.v1.ListTerminalTasksResponse & zdmatch.v1.ListTerminalTasksResponse.$Shape;
            static create(properties?: zdmatch.v1.ListTerminalTasksResponse.$Properties): zdmatch.v1.ListTerminalTasksResponse;
            static encode(m: zdmatch.v1.ListTerminalTasksResponse.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.ListTerminalTasksResponse.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.ListTerminalTasksResponse & zdmatch.v1.ListTerminalTasksResponse.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.ListTerminalTasksResponse & zdmatch.v1.ListTerminalTasksResponse.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.ListTerminalTasksResponse;
            static toObject(m: zdmatch.v1.ListTerminalTasksResponse, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace ListTerminalTasksResponse {
            interface $Properties {
                tasks?: (zdmatch.v1.TerminalTask.$Properties[]|null);
                incomplete?: (boolean|null);
                $unknowns?: Uint8Array[];
            }
            type $Shape = zdmatch.v1.ListTerminalTasksResponse.$Properties;
        }

        interface IRetryTerminalTaskRequest extends zdmatch.v1.RetryTerminalTaskRequest.$Properties {
        }

        class RetryTerminalTaskRequest {
            constructor(p?: zdmatch.v1.RetryTerminalTaskRequest.$Properties);
            $unknowns?: Uint8Array[];
            task_id: string;
            retries: number;
            static create(properties: zdmatch.v1.RetryTerminalTaskRequest.$Shape): zdmatch.v1.RetryTerminalTaskRequest & zdmatch.v1.RetryTerminalTaskRequest.$Shape;
            static create(properties?: zdmatch.v1.RetryTerminalTaskRequest.$Properties): zdmatch.v1.RetryTerminalTaskRequest;
            static encode(m: zdmatch.v1.RetryTerminalTaskRequest.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.RetryTerminalTaskRequest.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.RetryTerminalTaskRequest & zdmatch.v1.RetryTerminalTaskRequest.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.RetryTerminalTaskRequest & zdmatch.v1.RetryTerminalTaskRequest.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.RetryTerminalTaskRequest;
            static toObject(m: zdmatch.v1.RetryTerminalTaskRequest, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace RetryTerminalTaskRequest {
            interface $Properties {
                task_id?: (string|null);
                retries?: (number|null);
                $unknowns?: Uint8Array[];
            }
            type $Shape = zdmatch.v1.RetryTerminalTaskRequest.$Properties;
        }

        interface IRetryTerminalTaskResponse extends zdmatch.v1.RetryTerminalTaskResponse.$Properties {
        }

        class RetryTerminalTaskResponse {
            constructor(p?: zdmatch.v1.RetryTerminalTaskResponse.$Properties);
            $unknowns?: Uint8Array[];
            static create(properties: zdmatch.v1.RetryTerminalTaskResponse.$Shape): zdmatch.v1.RetryTerminalTaskResponse & zdmatch.v1.RetryTerminalTaskResponse.$Shape;
            static create(properties?: zdmatch.v1.RetryTerminalTaskResponse.$Properties): zdmatch.v1.RetryTerminalTaskResponse;
            static encode(m: zdmatch.v1.RetryTerminalTaskResponse.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.RetryTerminalTaskResponse.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.RetryTerminalTaskResponse & zdmatch.v1.RetryTerminalTaskResponse.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.RetryTerminalTaskResponse & zdmatch.v1.RetryTerminalTaskResponse.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.RetryTerminalTaskResponse;
            static toObject(m: zdmatch.v1.RetryTerminalTaskResponse, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace RetryTerminalTaskResponse {
            interface $Properties {
                $unknowns?: Uint8Array[];
            }
            type $Shape = zdmatch.v1.RetryTerminalTaskResponse.$Properties;
        }

        interface IAbandonTerminalTaskRequest extends zdmatch.v1.AbandonTerminalTaskRequest.$Properties {
        }

        class AbandonTerminalTaskRequest {
            constructor(p?: zdmatch.v1.AbandonTerminalTaskRequest.$Properties);
            $unknowns?: Uint8Array[];
            task_id: string;
            reason: string;
            static create(properties: zdmatch.v1.AbandonTerminalTaskRequest.$Shape): zdmatch.v1.AbandonTerminalTaskRequest & zdmatch.v1.AbandonTerminalTaskRequest.$Shape;
            static create(properties?: zdmatch.v1.AbandonTerminalTaskRequest.$Properties): zdmatch.v1.AbandonTerminalTaskRequest;
            static encode(m: zdmatch.v1.AbandonTerminalTaskRequest.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.AbandonTerminalTaskRequest.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.AbandonTerminalTaskRequest & zdmatch.v1.AbandonTerminalTaskRequest.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.AbandonTerminalTaskRequest & zdmatch.v1.AbandonTerminalTaskRequest.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.AbandonTerminalTaskRequest;
            static toObject(m: zdmatch.v1.AbandonTerminalTaskRequest, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace AbandonTerminalTaskRequest {
            interface $Properties {
                task_id?: (string|null);
                reason?: (string|null);
                $unknowns?: Uint8Array[];
            }
            type $Shape = zdmatch.v1.AbandonTerminalTaskRequest.$Properties;
        }

        interface IAbandonTerminalTaskResponse extends zdmatch.v1.AbandonTerminalTaskResponse.$Properties {
        }

        class AbandonTerminalTaskResponse {
            constructor(p?: zdmatch.v1.AbandonTerminalTaskResponse.$Properties);
            $unknowns?: Uint8Array[];
            outcome_id: string;
            static create(properties: zdmatch.v1.AbandonTerminalTaskResponse.$Shape): zdmatch.v1.AbandonTerminalTaskResponse & zdmatch.v1.AbandonTerminalTaskResponse.$Shape;
            static create(properties?: zdmatch.v1.AbandonTerminalTaskResponse.$Properties): zdmatch.v1.AbandonTerminalTaskResponse;
            static encode(m: zdmatch.v1.AbandonTerminalTaskResponse.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.AbandonTerminalTaskResponse.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.AbandonTerminalTaskResponse & zdmatch.v1.AbandonTerminalTaskResponse.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.AbandonTerminalTaskResponse & zdmatch.v1.AbandonTerminalTaskResponse.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.AbandonTerminalTaskResponse;
            static toObject(m: zdmatch.v1.AbandonTerminalTaskResponse, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace AbandonTerminalTaskResponse {
            interface $Properties {
                outcome_id?: (string|null);
                $unknowns?: Uint8Array[];
            }
            type $Shape = zdmatch.v1.AbandonTerminalTaskResponse.$Properties;
        }

        interface ITaskRef extends zdmatch.v1.TaskRef.$Properties {
        }

        class TaskRef {
            constructor(p?: zdmatch.v1.TaskRef.$Properties);
            $unknowns?: Uint8Array[];
            partition: number;
            task_id: string;
            attempt: number;
            tenant: string;
            flow_type: string;
            step_type: string;
            ready_at_ms: number;
            sticky_worker_id: string;
            path: string;
            static create(properties: zdmatch.v1.TaskRef.$Shape): zdmatch.v1.TaskRef & zdmatch.v1.TaskRef.$Shape;
            static create(properties?: zdmatch.v1.TaskRef.$Properties): zdmatch.v1.TaskRef;
            static encode(m: zdmatch.v1.TaskRef.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.TaskRef.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.TaskRef & zdmatch.v1.TaskRef.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.TaskRef & zdmatch.v1.TaskRef.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.TaskRef;
            static toObject(m: zdmatch.v1.TaskRef, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace TaskRef {
            interface $Properties {
                partition?: (number|null);
                task_id?: (string|null);
                attempt?: (number|null);
                tenant?: (string|null);
                flow_type?: (string|null);
                step_type?: (string|null);
                ready_at_ms?: (number|null);
                sticky_worker_id?: (string|null);
                path?: (string|null);
                $unknowns?: Uint8Array[];
            }
            type $Shape = zdmatch.v1.TaskRef.$Properties;
        }

        interface IOfferRequest extends zdmatch.v1.OfferRequest.$Properties {
        }

        class OfferRequest {
            constructor(p?: zdmatch.v1.OfferRequest.$Properties);
            $unknowns?: Uint8Array[];
            ref?: (zdmatch.v1.TaskRef.$Properties|null);
            owner_node_id: string;
            epoch: number;
            static create(properties: zdmatch.v1.OfferRequest.$Shape): zdmatch.v1.OfferRequest & zdmatch.v1.OfferRequest.$Shape;
            static create(properties?: zdmatch.v1.OfferRequest.$Properties): zdmatch.v1.OfferRequest;
            static encode(m: zdmatch.v1.OfferRequest.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.OfferRequest.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.OfferRequest & zdmatch.v1.OfferRequest.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.OfferRequest & zdmatch.v1.OfferRequest.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.OfferRequest;
            static toObject(m: zdmatch.v1.OfferRequest, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace OfferRequest {
            interface $Properties {
                ref?: (zdmatch.v1.TaskRef.$Properties|null);
                owner_node_id?: (string|null);
                epoch?: (number|null);
                $unknowns?: Uint8Array[];
            }
            type $Shape = zdmatch.v1.OfferRequest.$Properties;
        }

        enum OfferResult {
            OFFER_RESULT_UNSPECIFIED = 0,
            TAKEN = 1,
            NO_SLOT = 2,
            GONE = 3
        }

        interface IOfferResponse extends zdmatch.v1.OfferResponse.$Properties {
        }

        class OfferResponse {
            constructor(p?: zdmatch.v1.OfferResponse.$Properties);
            $unknowns?: Uint8Array[];
            result: zdmatch.v1.OfferResult;
            static create(properties: zdmatch.v1.OfferResponse.$Shape): zdmatch.v1.OfferResponse & zdmatch.v1.OfferResponse.$Shape;
            static create(properties?: zdmatch.v1.OfferResponse.$Properties): zdmatch.v1.OfferResponse;
            static encode(m: zdmatch.v1.OfferResponse.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.OfferResponse.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.OfferResponse & zdmatch.v1.OfferResponse.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.OfferResponse & zdmatch.v1.OfferResponse.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.OfferResponse;
            static toObject(m: zdmatch.v1.OfferResponse, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace OfferResponse {
            interface $Properties {
                result?: (zdmatch.v1.OfferResult|null);
                $unknowns?: Uint8Array[];
            }
            type $Shape = zdmatch.v1.OfferResponse.$Properties;
        }

        interface IOfferBatchRequest extends zdmatch.v1.OfferBatchRequest.$Properties {
        }

        class OfferBatchRequest {
            constructor(p?: zdmatch.v1.OfferBatchRequest.$Properties);
            $unknowns?: Uint8Array[];
            offers: zdmatch.v1.OfferRequest.$Properties[];
            static create(properties: zdmatch.v1.OfferBatchRequest.$Shape): zdmatch.v1.OfferBatchRequest & zdmatch.v1.OfferBatchRequest.$Shape;
            static create(properties?: zdmatch.v1.OfferBatchRequest.$Properties): zdmatch.v1.OfferBatchRequest;
            static encode(m: zdmatch.v1.OfferBatchRequest.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.OfferBatchRequest.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.OfferBatchRequest & zdmatch.v1.OfferBatchRequest.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.OfferBatchRequest & zdmatch.v1.OfferBatchRequest.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.OfferBatchRequest;
            static toObject(m: zdmatch.v1.OfferBatchRequest, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace OfferBatchRequest {
            interface $Properties {
                offers?: (zdmatch.v1.OfferRequest.$Properties[]|null);
                $unknowns?: Uint8Array[];
            }
            type $Shape = zdmatch.v1.OfferBatchRequest.$Properties;
        }

        interface IOfferBatchResponse extends zdmatch.v1.OfferBatchResponse.$Properties {
        }

        class OfferBatchResponse {
            constructor(p?: zdmatch.v1.OfferBatchResponse.$Properties);
            $unknowns?: Uint8Array[];
            results: zdmatch.v1.OfferResult[];
            static create(properties: zdmatch.v1.OfferBatchResponse.$Shape): zdmatch.v1.OfferBatchResponse & zdmatch.v1.OfferBatchResponse.$Shape;
            static create(properties?: zdmatch.v1.OfferBatchResponse.$Properties): zdmatch.v1.OfferBatchResponse;
            static encode(m: zdmatch.v1.OfferBatchResponse.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.OfferBatchResponse.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.OfferBatchResponse & zdmatch.v1.OfferBatchResponse.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.OfferBatchResponse & zdmatch.v1.OfferBatchResponse.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.OfferBatchResponse;
            static toObject(m: zdmatch.v1.OfferBatchResponse, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace OfferBatchResponse {
            interface $Properties {
                results?: (zdmatch.v1.OfferResult[]|null);
                $unknowns?: Uint8Array[];
            }
            type $Shape = zdmatch.v1.OfferBatchResponse.$Properties;
        }

        interface ICapacityEntry extends zdmatch.v1.CapacityEntry.$Properties {
        }

        class CapacityEntry {
            constructor(p?: zdmatch.v1.CapacityEntry.$Properties);
            $unknowns?: Uint8Array[];
            tenant: string;
            flow_type: string;
            idle_step_slots: number;
            idle_rpc_slots: number;
            static create(properties: zdmatch.v1.CapacityEntry.$Shape): zdmatch.v1.CapacityEntry & zdmatch.v1.CapacityEntry.$Shape;
            static create(properties?: zdmatch.v1.CapacityEntry.$Properties): zdmatch.v1.CapacityEntry;
            static encode(m: zdmatch.v1.CapacityEntry.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.CapacityEntry.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.CapacityEntry & zdmatch.v1.CapacityEntry.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.CapacityEntry & zdmatch.v1.CapacityEntry.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.CapacityEntry;
            static toObject(m: zdmatch.v1.CapacityEntry, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace CapacityEntry {
            interface $Properties {
                tenant?: (string|null);
                flow_type?: (string|null);
                idle_step_slots?: (number|null);
                idle_rpc_slots?: (number|null);
                $unknowns?: Uint8Array[];
            }
            type $Shape = zdmatch.v1.CapacityEntry.$Properties;
        }

        interface IDeclinedType extends zdmatch.v1.DeclinedType.$Properties {
        }

        class DeclinedType {
            constructor(p?: zdmatch.v1.DeclinedType.$Properties);
            $unknowns?: Uint8Array[];
            tenant: string;
            flow_type: string;
            type: string;
            app_worker_id: string;
            static create(properties: zdmatch.v1.DeclinedType.$Shape): zdmatch.v1.DeclinedType & zdmatch.v1.DeclinedType.$Shape;
            static create(properties?: zdmatch.v1.DeclinedType.$Properties): zdmatch.v1.DeclinedType;
            static encode(m: zdmatch.v1.DeclinedType.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.DeclinedType.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.DeclinedType & zdmatch.v1.DeclinedType.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.DeclinedType & zdmatch.v1.DeclinedType.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.DeclinedType;
            static toObject(m: zdmatch.v1.DeclinedType, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace DeclinedType {
            interface $Properties {
                tenant?: (string|null);
                flow_type?: (string|null);
                type?: (string|null);
                app_worker_id?: (string|null);
                $unknowns?: Uint8Array[];
            }
            type $Shape = zdmatch.v1.DeclinedType.$Properties;
        }

        interface IWorkerPresence extends zdmatch.v1.WorkerPresence.$Properties {
        }

        class WorkerPresence {
            constructor(p?: zdmatch.v1.WorkerPresence.$Properties);
            $unknowns?: Uint8Array[];
            tenant: string;
            app_worker_id: string;
            flow_types: string[];
            idle_step_slots: number;
            busy_slots: number;
            idle_rpc_slots: number;
            draining: boolean;
            step_flow_types: string[];
            static create(properties: zdmatch.v1.WorkerPresence.$Shape): zdmatch.v1.WorkerPresence & zdmatch.v1.WorkerPresence.$Shape;
            static create(properties?: zdmatch.v1.WorkerPresence.$Properties): zdmatch.v1.WorkerPresence;
            static encode(m: zdmatch.v1.WorkerPresence.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.WorkerPresence.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.WorkerPresence & zdmatch.v1.WorkerPresence.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.WorkerPresence & zdmatch.v1.WorkerPresence.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.WorkerPresence;
            static toObject(m: zdmatch.v1.WorkerPresence, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace WorkerPresence {
            interface $Properties {
                tenant?: (string|null);
                app_worker_id?: (string|null);
                flow_types?: (string[]|null);
                idle_step_slots?: (number|null);
                busy_slots?: (number|null);
                idle_rpc_slots?: (number|null);
                draining?: (boolean|null);
                step_flow_types?: (string[]|null);
                $unknowns?: Uint8Array[];
            }
            type $Shape = zdmatch.v1.WorkerPresence.$Properties;
        }

        interface ICapacityUpdate extends zdmatch.v1.CapacityUpdate.$Properties {
        }

        class CapacityUpdate {
            constructor(p?: zdmatch.v1.CapacityUpdate.$Properties);
            $unknowns?: Uint8Array[];
            node_id: string;
            seq: number;
            entries: zdmatch.v1.CapacityEntry.$Properties[];
            declined: zdmatch.v1.DeclinedType.$Properties[];
            workers: zdmatch.v1.WorkerPresence.$Properties[];
            outcome_waiter_gen: number;
            outcome_waiters: number;
            backlog_advertised: boolean;
            busy_queues: string[];
            waiting_flows: string[];
            backlog_loading: boolean;
            fetch_topics: string[];
            step_flow_types_advertised: boolean;
            fetched_topics: string[];
            static create(properties: zdmatch.v1.CapacityUpdate.$Shape): zdmatch.v1.CapacityUpdate & zdmatch.v1.CapacityUpdate.$Shape;
            static create(properties?: zdmatch.v1.CapacityUpdate.$Properties): zdmatch.v1.CapacityUpdate;
            static encode(m: zdmatch.v1.CapacityUpdate.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.CapacityUpdate.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.CapacityUpdate & zdmatch.v1.CapacityUpdate.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.CapacityUpdate & zdmatch.v1.CapacityUpdate.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.CapacityUpdate;
            static toObject(m: zdmatch.v1.CapacityUpdate, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace CapacityUpdate {
            interface $Properties {
                node_id?: (string|null);
                seq?: (number|null);
                entries?: (zdmatch.v1.CapacityEntry.$Properties[]|null);
                declined?: (zdmatch.v1.DeclinedType.$Properties[]|null);
                workers?: (zdmatch.v1.WorkerPresence.$Properties[]|null);
                outcome_waiter_gen?: (number|null);
                outcome_waiters?: (number|null);
                backlog_advertised?: (boolean|null);
                busy_queues?: (string[]|null);
                waiting_flows?: (string[]|null);
                backlog_loading?: (boolean|null);
                fetch_topics?: (string[]|null);
                step_flow_types_advertised?: (boolean|null);
                fetched_topics?: (string[]|null);
                $unknowns?: Uint8Array[];
            }
            type $Shape = zdmatch.v1.CapacityUpdate.$Properties;
        }

        interface IDoorbellEvent extends zdmatch.v1.DoorbellEvent.$Properties {
        }

        class DoorbellEvent {
            constructor(p?: zdmatch.v1.DoorbellEvent.$Properties);
            $unknowns?: Uint8Array[];
            kind: zdmatch.v1.DoorbellEvent.Kind;
            partition: number;
            task_id: string;
            queue: string;
            at_ms: number;
            sticky_worker_id: string;
            fresh: boolean;
            static create(properties: zdmatch.v1.DoorbellEvent.$Shape): zdmatch.v1.DoorbellEvent & zdmatch.v1.DoorbellEvent.$Shape;
            static create(properties?: zdmatch.v1.DoorbellEvent.$Properties): zdmatch.v1.DoorbellEvent;
            static encode(m: zdmatch.v1.DoorbellEvent.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.DoorbellEvent.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.DoorbellEvent & zdmatch.v1.DoorbellEvent.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.DoorbellEvent & zdmatch.v1.DoorbellEvent.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.DoorbellEvent;
            static toObject(m: zdmatch.v1.DoorbellEvent, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace DoorbellEvent {
            interface $Properties {
                kind?: (zdmatch.v1.DoorbellEvent.Kind|null);
                partition?: (number|null);
                task_id?: (string|null);
                queue?: (string|null);
                at_ms?: (number|null);
                sticky_worker_id?: (string|null);
                fresh?: (boolean|null);
                $unknowns?: Uint8Array[];
            }
            type $Shape = zdmatch.v1.DoorbellEvent.$Properties;

            enum Kind {
                KIND_UNSPECIFIED = 0,
                READY = 1,
                OUTCOME = 2,
                ATTEMPT = 3,
                FLOW_DEADLINE = 4,
                FETCH = 5,
                LEASE_RELEASED = 6
            }
        }

        interface IDoorbellRequest extends zdmatch.v1.DoorbellRequest.$Properties {
        }

        class DoorbellRequest {
            constructor(p?: zdmatch.v1.DoorbellRequest.$Properties);
            $unknowns?: Uint8Array[];
            from_node_id: string;
            events: zdmatch.v1.DoorbellEvent.$Properties[];
            static create(properties: zdmatch.v1.DoorbellRequest.$Shape): zdmatch.v1.DoorbellRequest & zdmatch.v1.DoorbellRequest.$Shape;
            static create(properties?: zdmatch.v1.DoorbellRequest.$Properties): zdmatch.v1.DoorbellRequest;
            static encode(m: zdmatch.v1.DoorbellRequest.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.DoorbellRequest.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.DoorbellRequest & zdmatch.v1.DoorbellRequest.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.DoorbellRequest & zdmatch.v1.DoorbellRequest.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.DoorbellRequest;
            static toObject(m: zdmatch.v1.DoorbellRequest, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace DoorbellRequest {
            interface $Properties {
                from_node_id?: (string|null);
                events?: (zdmatch.v1.DoorbellEvent.$Properties[]|null);
                $unknowns?: Uint8Array[];
            }
            type $Shape = zdmatch.v1.DoorbellRequest.$Properties;
        }

        interface ICancelledAttemptRef extends zdmatch.v1.CancelledAttemptRef.$Properties {
        }

        class CancelledAttemptRef {
            constructor(p?: zdmatch.v1.CancelledAttemptRef.$Properties);
            $unknowns?: Uint8Array[];
            task_id: string;
            attempt: number;
            nonce: string;
            stream_id: string;
            static create(properties: zdmatch.v1.CancelledAttemptRef.$Shape): zdmatch.v1.CancelledAttemptRef & zdmatch.v1.CancelledAttemptRef.$Shape;
            static create(properties?: zdmatch.v1.CancelledAttemptRef.$Properties): zdmatch.v1.CancelledAttemptRef;
            static encode(m: zdmatch.v1.CancelledAttemptRef.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.CancelledAttemptRef.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.CancelledAttemptRef & zdmatch.v1.CancelledAttemptRef.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.CancelledAttemptRef & zdmatch.v1.CancelledAttemptRef.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.CancelledAttemptRef;
            static toObject(m: zdmatch.v1.CancelledAttemptRef, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace CancelledAttemptRef {
            interface $Properties {
                task_id?: (string|null);
                attempt?: (number|null);
                nonce?: (string|null);
                stream_id?: (string|null);
                $unknowns?: Uint8Array[];
            }
            type $Shape = zdmatch.v1.CancelledAttemptRef.$Properties;
        }

        interface ICancelAttemptsRequest extends zdmatch.v1.CancelAttemptsRequest.$Properties {
        }

        class CancelAttemptsRequest {
            constructor(p?: zdmatch.v1.CancelAttemptsRequest.$Properties);
            $unknowns?: Uint8Array[];
            attempts: zdmatch.v1.CancelledAttemptRef.$Properties[];
            reason: string;
            static create(properties: zdmatch.v1.CancelAttemptsRequest.$Shape): zdmatch.v1.CancelAttemptsRequest & zdmatch.v1.CancelAttemptsRequest.$Shape;
            static create(properties?: zdmatch.v1.CancelAttemptsRequest.$Properties): zdmatch.v1.CancelAttemptsRequest;
            static encode(m: zdmatch.v1.CancelAttemptsRequest.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.CancelAttemptsRequest.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.CancelAttemptsRequest & zdmatch.v1.CancelAttemptsRequest.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.CancelAttemptsRequest & zdmatch.v1.CancelAttemptsRequest.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.CancelAttemptsRequest;
            static toObject(m: zdmatch.v1.CancelAttemptsRequest, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace CancelAttemptsRequest {
            interface $Properties {
                attempts?: (zdmatch.v1.CancelledAttemptRef.$Properties[]|null);
                reason?: (string|null);
                $unknowns?: Uint8Array[];
            }
            type $Shape = zdmatch.v1.CancelAttemptsRequest.$Properties;
        }

        interface IPeerAck extends zdmatch.v1.PeerAck.$Properties {
        }

        class PeerAck {
            constructor(p?: zdmatch.v1.PeerAck.$Properties);
            $unknowns?: Uint8Array[];
            static create(properties: zdmatch.v1.PeerAck.$Shape): zdmatch.v1.PeerAck & zdmatch.v1.PeerAck.$Shape;
            static create(properties?: zdmatch.v1.PeerAck.$Properties): zdmatch.v1.PeerAck;
            static encode(m: zdmatch.v1.PeerAck.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.PeerAck.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.PeerAck & zdmatch.v1.PeerAck.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.PeerAck & zdmatch.v1.PeerAck.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.PeerAck;
            static toObject(m: zdmatch.v1.PeerAck, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace PeerAck {
            interface $Properties {
                $unknowns?: Uint8Array[];
            }
            type $Shape = zdmatch.v1.PeerAck.$Properties;
        }

        interface IHeldAttemptsRequest extends zdmatch.v1.HeldAttemptsRequest.$Properties {
        }

        class HeldAttemptsRequest {
            constructor(p?: zdmatch.v1.HeldAttemptsRequest.$Properties);
            $unknowns?: Uint8Array[];
            boot_id: string;
            nonces: string[];
            static create(properties: zdmatch.v1.HeldAttemptsRequest.$Shape): zdmatch.v1.HeldAttemptsRequest & zdmatch.v1.HeldAttemptsRequest.$Shape;
            static create(properties?: zdmatch.v1.HeldAttemptsRequest.$Properties): zdmatch.v1.HeldAttemptsRequest;
            static encode(m: zdmatch.v1.HeldAttemptsRequest.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.HeldAttemptsRequest.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.HeldAttemptsRequest & zdmatch.v1.HeldAttemptsRequest.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.HeldAttemptsRequest & zdmatch.v1.HeldAttemptsRequest.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.HeldAttemptsRequest;
            static toObject(m: zdmatch.v1.HeldAttemptsRequest, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace HeldAttemptsRequest {
            interface $Properties {
                boot_id?: (string|null);
                nonces?: (string[]|null);
                $unknowns?: Uint8Array[];
            }
            type $Shape = zdmatch.v1.HeldAttemptsRequest.$Properties;
        }

        interface IHeldAttemptsResponse extends zdmatch.v1.HeldAttemptsResponse.$Properties {
        }

        class HeldAttemptsResponse {
            constructor(p?: zdmatch.v1.HeldAttemptsResponse.$Properties);
            $unknowns?: Uint8Array[];
            boot_id: string;
            held: boolean[];
            static create(properties: zdmatch.v1.HeldAttemptsResponse.$Shape): zdmatch.v1.HeldAttemptsResponse & zdmatch.v1.HeldAttemptsResponse.$Shape;
            static create(properties?: zdmatch.v1.HeldAttemptsResponse.$Properties): zdmatch.v1.HeldAttemptsResponse;
            static encode(m: zdmatch.v1.HeldAttemptsResponse.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.HeldAttemptsResponse.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.HeldAttemptsResponse & zdmatch.v1.HeldAttemptsResponse.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.HeldAttemptsResponse & zdmatch.v1.HeldAttemptsResponse.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.HeldAttemptsResponse;
            static toObject(m: zdmatch.v1.HeldAttemptsResponse, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace HeldAttemptsResponse {
            interface $Properties {
                boot_id?: (string|null);
                held?: (boolean[]|null);
                $unknowns?: Uint8Array[];
            }
            type $Shape = zdmatch.v1.HeldAttemptsResponse.$Properties;
        }

        interface ILinkFrame extends zdmatch.v1.LinkFrame.$Properties {
        }

        class LinkFrame {
            constructor(p?: zdmatch.v1.LinkFrame.$Properties);
            $unknowns?: Uint8Array[];
            id: number;
            hello?: (zdmatch.v1.PeerAck.$Properties|null);
            capacity?: (zdmatch.v1.CapacityUpdate.$Properties|null);
            doorbell?: (zdmatch.v1.DoorbellRequest.$Properties|null);
            offers?: (zdmatch.v1.OfferBatchRequest.$Properties|null);
            offer_results?: (zdmatch.v1.OfferBatchResponse.$Properties|null);
            frame?: ("hello"|"capacity"|"doorbell"|"offers"|"offer_results");
            static create(properties: zdmatch.v1.LinkFrame.$Shape): zdmatch.v1.LinkFrame & zdmatch.v1.LinkFrame.$Shape;
            static create(properties?: zdmatch.v1.LinkFrame.$Properties): zdmatch.v1.LinkFrame;
            static encode(m: zdmatch.v1.LinkFrame.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.LinkFrame.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.LinkFrame & zdmatch.v1.LinkFrame.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.LinkFrame & zdmatch.v1.LinkFrame.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.LinkFrame;
            static toObject(m: zdmatch.v1.LinkFrame, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace LinkFrame {
            interface $Properties {
                id?: (number|null);
                hello?: (zdmatch.v1.PeerAck.$Properties|null);
                capacity?: (zdmatch.v1.CapacityUpdate.$Properties|null);
                doorbell?: (zdmatch.v1.DoorbellRequest.$Properties|null);
                offers?: (zdmatch.v1.OfferBatchRequest.$Properties|null);
                offer_results?: (zdmatch.v1.OfferBatchResponse.$Properties|null);
                frame?: ("hello"|"capacity"|"doorbell"|"offers"|"offer_results");
                $unknowns?: Uint8Array[];
            }
            type $Shape = {
              id?: number|null;
              hello?: zdmatch.v1.PeerAck.$Shape|null;
              capacity?: zdmatch.v1.CapacityUpdate.$Shape|null;
              doorbell?: zdmatch.v1.DoorbellRequest.$Shape|null;
              offers?: zdmatch.v1.OfferBatchRequest.$Shape|null;
              offer_results?: zdmatch.v1.OfferBatchResponse.$Shape|null;
              $unknowns?: Uint8Array[];
            } & (
              ({ frame?: undefined; hello?: null; capacity?: null; doorbell?: null; offers?: null; offer_results?: null }|{ frame?: "hello"; hello: zdmatch.v1.PeerAck.$Shape; capacity?: null; doorbell?: null; offers?: null; offer_results?: null }|{ frame?: "capacity"; hello?: null; capacity: zdmatch.v1.CapacityUpdate.$Shape; doorbell?: null; offers?: null; offer_results?: null }|{ frame?: "doorbell"; hello?: null; capacity?: null; doorbell: zdmatch.v1.DoorbellRequest.$Shape; offers?: null; offer_results?: null }|{ frame?: "offers"; hello?: null; capacity?: null; doorbell?: null; offers: zdmatch.v1.OfferBatchRequest.$Shape; offer_results?: null }|{ frame?: "offer_results"; hello?: null; capacity?: null; doorbell?: null; offers?: null; offer_results: zdmatch.v1.OfferBatchResponse.$Shape })
            );
        }

        interface IStepSpec extends zdmatch.v1.StepSpec.$Properties {
        }

        class StepSpec {
            constructor(p?: zdmatch.v1.StepSpec.$Properties);
            $unknowns?: Uint8Array[];
            tenant: string;
            flow_id: string;
            flow_type: string;
            step_type: string;
            step_execution_id: string;
            input: Uint8Array;
            ready_at_ms: number;
            flow_deadline_ms: number;
            method_timeout_ms: number;
            heartbeat_timeout_ms: number;
            retry_policy?: (zdmatch.v1.RetryPolicy.$Properties|null);
            sticky_worker_id: string;
            static create(properties: zdmatch.v1.StepSpec.$Shape): zdmatch.v1.StepSpec & zdmatch.v1.StepSpec.$Shape;
            static create(properties?: zdmatch.v1.StepSpec.$Properties): zdmatch.v1.StepSpec;
            static encode(m: zdmatch.v1.StepSpec.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.StepSpec.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.StepSpec & zdmatch.v1.StepSpec.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.StepSpec & zdmatch.v1.StepSpec.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.StepSpec;
            static toObject(m: zdmatch.v1.StepSpec, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace StepSpec {
            interface $Properties {
                tenant?: (string|null);
                flow_id?: (string|null);
                flow_type?: (string|null);
                step_type?: (string|null);
                step_execution_id?: (string|null);
                input?: (Uint8Array|null);
                ready_at_ms?: (number|null);
                flow_deadline_ms?: (number|null);
                method_timeout_ms?: (number|null);
                heartbeat_timeout_ms?: (number|null);
                retry_policy?: (zdmatch.v1.RetryPolicy.$Properties|null);
                sticky_worker_id?: (string|null);
                $unknowns?: Uint8Array[];
            }
            type $Shape = zdmatch.v1.StepSpec.$Properties;
        }

        interface IEnqueueStepRequest extends zdmatch.v1.EnqueueStepRequest.$Properties {
        }

        class EnqueueStepRequest {
            constructor(p?: zdmatch.v1.EnqueueStepRequest.$Properties);
            $unknowns?: Uint8Array[];
            step?: (zdmatch.v1.StepSpec.$Properties|null);
            static create(properties: zdmatch.v1.EnqueueStepRequest.$Shape): zdmatch.v1.EnqueueStepRequest & zdmatch.v1.EnqueueStepRequest.$Shape;
            static create(properties?: zdmatch.v1.EnqueueStepRequest.$Properties): zdmatch.v1.EnqueueStepRequest;
            static encode(m: zdmatch.v1.EnqueueStepRequest.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.EnqueueStepRequest.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.EnqueueStepRequest & zdmatch.v1.EnqueueStepRequest.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.EnqueueStepRequest & zdmatch.v1.EnqueueStepRequest.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.EnqueueStepRequest;
            static toObject(m: zdmatch.v1.EnqueueStepRequest, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace EnqueueStepRequest {
            interface $Properties {
                step?: (zdmatch.v1.StepSpec.$Properties|null);
                $unknowns?: Uint8Array[];
            }
            type $Shape = zdmatch.v1.EnqueueStepRequest.$Properties;
        }

        interface IEnqueueStepResponse extends zdmatch.v1.EnqueueStepResponse.$Properties {
        }

        class EnqueueStepResponse {
            constructor(p?: zdmatch.v1.EnqueueStepResponse.$Properties);
            $unknowns?: Uint8Array[];
            task_id: string;
            created: boolean;
            partition: number;
            static create(properties: zdmatch.v1.EnqueueStepResponse.$Shape): zdmatch.v1.EnqueueStepResponse & zdmatch.v1.EnqueueStepResponse.$Shape;
            static create(properties?: zdmatch.v1.EnqueueStepResponse.$Properties): zdmatch.v1.EnqueueStepResponse;
            static encode(m: zdmatch.v1.EnqueueStepResponse.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.EnqueueStepResponse.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.EnqueueStepResponse & zdmatch.v1.EnqueueStepResponse.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.EnqueueStepResponse & zdmatch.v1.EnqueueStepResponse.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.EnqueueStepResponse;
            static toObject(m: zdmatch.v1.EnqueueStepResponse, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace EnqueueStepResponse {
            interface $Properties {
                task_id?: (string|null);
                created?: (boolean|null);
                partition?: (number|null);
                $unknowns?: Uint8Array[];
            }
            type $Shape = zdmatch.v1.EnqueueStepResponse.$Properties;
        }

        interface IEnqueueStepsRequest extends zdmatch.v1.EnqueueStepsRequest.$Properties {
        }

        class EnqueueStepsRequest {
            constructor(p?: zdmatch.v1.EnqueueStepsRequest.$Properties);
            $unknowns?: Uint8Array[];
            steps: zdmatch.v1.StepSpec.$Properties[];
            static create(properties: zdmatch.v1.EnqueueStepsRequest.$Shape): zdmatch.v1.EnqueueStepsRequest & zdmatch.v1.EnqueueStepsRequest.$Shape;
            static create(properties?: zdmatch.v1.EnqueueStepsRequest.$Properties): zdmatch.v1.EnqueueStepsRequest;
            static encode(m: zdmatch.v1.EnqueueStepsRequest.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.EnqueueStepsRequest.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.EnqueueStepsRequest & zdmatch.v1.EnqueueStepsRequest.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.EnqueueStepsRequest & zdmatch.v1.EnqueueStepsRequest.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.EnqueueStepsRequest;
            static toObject(m: zdmatch.v1.EnqueueStepsRequest, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace EnqueueStepsRequest {
            interface $Properties {
                steps?: (zdmatch.v1.StepSpec.$Properties[]|null);
                $unknowns?: Uint8Array[];
            }
            type $Shape = zdmatch.v1.EnqueueStepsRequest.$Properties;
        }

        interface IEnqueueStepsResponse extends zdmatch.v1.EnqueueStepsResponse.$Properties {
        }

        class EnqueueStepsResponse {
            constructor(p?: zdmatch.v1.EnqueueStepsResponse.$Properties);
            $unknowns?: Uint8Array[];
            results: zdmatch.v1.EnqueueStepResponse.$Properties[];
            static create(properties: zdmatch.v1.EnqueueStepsResponse.$Shape): zdmatch.v1.EnqueueStepsResponse & zdmatch.v1.EnqueueStepsResponse.$Shape;
            static create(properties?: zdmatch.v1.EnqueueStepsResponse.$Properties): zdmatch.v1.EnqueueStepsResponse;
            static encode(m: zdmatch.v1.EnqueueStepsResponse.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.EnqueueStepsResponse.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.EnqueueStepsResponse & zdmatch.v1.EnqueueStepsResponse.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.EnqueueStepsResponse & zdmatch.v1.EnqueueStepsResponse.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.EnqueueStepsResponse;
            static toObject(m: zdmatch.v1.EnqueueStepsResponse, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace EnqueueStepsResponse {
            interface $Properties {
                results?: (zdmatch.v1.EnqueueStepResponse.$Properties[]|null);
                $unknowns?: Uint8Array[];
            }
            type $Shape = zdmatch.v1.EnqueueStepsResponse.$Properties;
        }

        interface IEnqueueStreamRequest extends zdmatch.v1.EnqueueStreamRequest.$Properties {
        }

        class EnqueueStreamRequest {
            constructor(p?: zdmatch.v1.EnqueueStreamRequest.$Properties);
            $unknowns?: Uint8Array[];
            request_id: number;
            steps: zdmatch.v1.StepSpec.$Properties[];
            static create(properties: zdmatch.v1.EnqueueStreamRequest.$Shape): zdmatch.v1.EnqueueStreamRequest & zdmatch.v1.EnqueueStreamRequest.$Shape;
            static create(properties?: zdmatch.v1.EnqueueStreamRequest.$Properties): zdmatch.v1.EnqueueStreamRequest;
            static encode(m: zdmatch.v1.EnqueueStreamRequest.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.EnqueueStreamRequest.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.EnqueueStreamRequest & zdmatch.v1.EnqueueStreamRequest.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.EnqueueStreamRequest & zdmatch.v1.EnqueueStreamRequest.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.EnqueueStreamRequest;
            static toObject(m: zdmatch.v1.EnqueueStreamRequest, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace EnqueueStreamRequest {
            interface $Properties {
                request_id?: (number|null);
                steps?: (zdmatch.v1.StepSpec.$Properties[]|null);
                $unknowns?: Uint8Array[];
            }
            type $Shape = zdmatch.v1.EnqueueStreamRequest.$Properties;
        }

        interface IEnqueueStreamResponse extends zdmatch.v1.EnqueueStreamResponse.$Properties {
        }

        class EnqueueStreamResponse {
            constructor(p?: zdmatch.v1.EnqueueStreamResponse.$Properties);
            $unknowns?: Uint8Array[];
            request_id: number;
            results: zdmatch.v1.EnqueueStepResponse.$Properties[];
            error?: (zdmatch.v1.CallError.$Properties|null);
            static create(properties: zdmatch.v1.EnqueueStreamResponse.$Shape): zdmatch.v1.EnqueueStreamResponse & zdmatch.v1.EnqueueStreamResponse.$Shape;
            static create(properties?: zdmatch.v1.EnqueueStreamResponse.$Properties): zdmatch.v1.EnqueueStreamResponse;
            static encode(m: zdmatch.v1.EnqueueStreamResponse.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.EnqueueStreamResponse.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.EnqueueStreamResponse & zdmatch.v1.EnqueueStreamResponse.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.EnqueueStreamResponse & zdmatch.v1.EnqueueStreamResponse.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.EnqueueStreamResponse;
            static toObject(m: zdmatch.v1.EnqueueStreamResponse, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace EnqueueStreamResponse {
            interface $Properties {
                request_id?: (number|null);
                results?: (zdmatch.v1.EnqueueStepResponse.$Properties[]|null);
                error?: (zdmatch.v1.CallError.$Properties|null);
                $unknowns?: Uint8Array[];
            }
            type $Shape = zdmatch.v1.EnqueueStreamResponse.$Properties;
        }

        interface ICallError extends zdmatch.v1.CallError.$Properties {
        }

        class CallError {
            constructor(p?: zdmatch.v1.CallError.$Properties);
            $unknowns?: Uint8Array[];
            code: number;
            message: string;
            static create(properties: zdmatch.v1.CallError.$Shape): zdmatch.v1.CallError & zdmatch.v1.CallError.$Shape;
            static create(properties?: zdmatch.v1.CallError.$Properties): zdmatch.v1.CallError;
            static encode(m: zdmatch.v1.CallError.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.CallError.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.CallError & zdmatch.v1.CallError.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.CallError & zdmatch.v1.CallError.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.CallError;
            static toObject(m: zdmatch.v1.CallError, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace CallError {
            interface $Properties {
                code?: (number|null);
                message?: (string|null);
                $unknowns?: Uint8Array[];
            }
            type $Shape = zdmatch.v1.CallError.$Properties;
        }

        interface IGetTaskRequest extends zdmatch.v1.GetTaskRequest.$Properties {
        }

        class GetTaskRequest {
            constructor(p?: zdmatch.v1.GetTaskRequest.$Properties);
            $unknowns?: Uint8Array[];
            task_id: string;
            static create(properties: zdmatch.v1.GetTaskRequest.$Shape): zdmatch.v1.GetTaskRequest & zdmatch.v1.GetTaskRequest.$Shape;
            static create(properties?: zdmatch.v1.GetTaskRequest.$Properties): zdmatch.v1.GetTaskRequest;
            static encode(m: zdmatch.v1.GetTaskRequest.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.GetTaskRequest.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.GetTaskRequest & zdmatch.v1.GetTaskRequest.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.GetTaskRequest & zdmatch.v1.GetTaskRequest.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.GetTaskRequest;
            static toObject(m: zdmatch.v1.GetTaskRequest, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace GetTaskRequest {
            interface $Properties {
                task_id?: (string|null);
                $unknowns?: Uint8Array[];
            }
            type $Shape = zdmatch.v1.GetTaskRequest.$Properties;
        }

        interface ITaskInfo extends zdmatch.v1.TaskInfo.$Properties {
        }

        class TaskInfo {
            constructor(p?: zdmatch.v1.TaskInfo.$Properties);
            $unknowns?: Uint8Array[];
            task_id: string;
            partition: number;
            state: zdmatch.v1.TaskState;
            tenant: string;
            flow_id: string;
            flow_type: string;
            step_type: string;
            step_execution_id: string;
            attempt: number;
            ready_at_ms: number;
            enqueued_at_ms: number;
            app_worker_id: string;
            node_id: string;
            last_error?: (zdmatch.v1.Failure.$Properties|null);
            input: Uint8Array;
            flow_deadline_ms: number;
            max_attempts: number;
            outcome?: (zdmatch.v1.Outcome.$Properties|null);
            static create(properties: zdmatch.v1.TaskInfo.$Shape): zdmatch.v1.TaskInfo & zdmatch.v1.TaskInfo.$Shape;
            static create(properties?: zdmatch.v1.TaskInfo.$Properties): zdmatch.v1.TaskInfo;
            static encode(m: zdmatch.v1.TaskInfo.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.TaskInfo.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.TaskInfo & zdmatch.v1.TaskInfo.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.TaskInfo & zdmatch.v1.TaskInfo.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.TaskInfo;
            static toObject(m: zdmatch.v1.TaskInfo, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace TaskInfo {
            interface $Properties {
                task_id?: (string|null);
                partition?: (number|null);
                state?: (zdmatch.v1.TaskState|null);
                tenant?: (string|null);
                flow_id?: (string|null);
                flow_type?: (string|null);
                step_type?: (string|null);
                step_execution_id?: (string|null);
                attempt?: (number|null);
                ready_at_ms?: (number|null);
                enqueued_at_ms?: (number|null);
                app_worker_id?: (string|null);
                node_id?: (string|null);
                last_error?: (zdmatch.v1.Failure.$Properties|null);
                input?: (Uint8Array|null);
                flow_deadline_ms?: (number|null);
                max_attempts?: (number|null);
                outcome?: (zdmatch.v1.Outcome.$Properties|null);
                $unknowns?: Uint8Array[];
            }
            type $Shape = zdmatch.v1.TaskInfo.$Properties;
        }

        interface IGetTaskResponse extends zdmatch.v1.GetTaskResponse.$Properties {
        }

        class GetTaskResponse {
            constructor(p?: zdmatch.v1.GetTaskResponse.$Properties);
            $unknowns?: Uint8Array[];
            task?: (zdmatch.v1.TaskInfo.$Properties|null);
            static create(properties: zdmatch.v1.GetTaskResponse.$Shape): zdmatch.v1.GetTaskResponse & zdmatch.v1.GetTaskResponse.$Shape;
            static create(properties?: zdmatch.v1.GetTaskResponse.$Properties): zdmatch.v1.GetTaskResponse;
            static encode(m: zdmatch.v1.GetTaskResponse.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.GetTaskResponse.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.GetTaskResponse & zdmatch.v1.GetTaskResponse.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.GetTaskResponse & zdmatch.v1.GetTaskResponse.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.GetTaskResponse;
            static toObject(m: zdmatch.v1.GetTaskResponse, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace GetTaskResponse {
            interface $Properties {
                task?: (zdmatch.v1.TaskInfo.$Properties|null);
                $unknowns?: Uint8Array[];
            }
            type $Shape = zdmatch.v1.GetTaskResponse.$Properties;
        }

        interface IWaitOutcomeRequest extends zdmatch.v1.WaitOutcomeRequest.$Properties {
        }

        class WaitOutcomeRequest {
            constructor(p?: zdmatch.v1.WaitOutcomeRequest.$Properties);
            $unknowns?: Uint8Array[];
            task_id: string;
            wait_ms: number;
            static create(properties: zdmatch.v1.WaitOutcomeRequest.$Shape): zdmatch.v1.WaitOutcomeRequest & zdmatch.v1.WaitOutcomeRequest.$Shape;
            static create(properties?: zdmatch.v1.WaitOutcomeRequest.$Properties): zdmatch.v1.WaitOutcomeRequest;
            static encode(m: zdmatch.v1.WaitOutcomeRequest.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.WaitOutcomeRequest.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.WaitOutcomeRequest & zdmatch.v1.WaitOutcomeRequest.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.WaitOutcomeRequest & zdmatch.v1.WaitOutcomeRequest.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.WaitOutcomeRequest;
            static toObject(m: zdmatch.v1.WaitOutcomeRequest, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace WaitOutcomeRequest {
            interface $Properties {
                task_id?: (string|null);
                wait_ms?: (number|null);
                $unknowns?: Uint8Array[];
            }
            type $Shape = zdmatch.v1.WaitOutcomeRequest.$Properties;
        }

        interface IWaitOutcomeResponse extends zdmatch.v1.WaitOutcomeResponse.$Properties {
        }

        class WaitOutcomeResponse {
            constructor(p?: zdmatch.v1.WaitOutcomeResponse.$Properties);
            $unknowns?: Uint8Array[];
            outcome?: (zdmatch.v1.Outcome.$Properties|null);
            static create(properties: zdmatch.v1.WaitOutcomeResponse.$Shape): zdmatch.v1.WaitOutcomeResponse & zdmatch.v1.WaitOutcomeResponse.$Shape;
            static create(properties?: zdmatch.v1.WaitOutcomeResponse.$Properties): zdmatch.v1.WaitOutcomeResponse;
            static encode(m: zdmatch.v1.WaitOutcomeResponse.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.WaitOutcomeResponse.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.WaitOutcomeResponse & zdmatch.v1.WaitOutcomeResponse.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.WaitOutcomeResponse & zdmatch.v1.WaitOutcomeResponse.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.WaitOutcomeResponse;
            static toObject(m: zdmatch.v1.WaitOutcomeResponse, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace WaitOutcomeResponse {
            interface $Properties {
                outcome?: (zdmatch.v1.Outcome.$Properties|null);
                $unknowns?: Uint8Array[];
            }
            type $Shape = zdmatch.v1.WaitOutcomeResponse.$Properties;
        }

        interface IConsumeOutcomesRequest extends zdmatch.v1.ConsumeOutcomesRequest.$Properties {
        }

        class ConsumeOutcomesRequest {
            constructor(p?: zdmatch.v1.ConsumeOutcomesRequest.$Properties);
            $unknowns?: Uint8Array[];
            group: string;
            consumer: string;
            max_count: number;
            wait_ms: number;
            ack: string[];
            redeliver_after_ms: number;
            tenant: string;
            static create(properties: zdmatch.v1.ConsumeOutcomesRequest.$Shape): zdmatch.v1.ConsumeOutcomesRequest & zdmatch.v1.ConsumeOutcomesRequest.$Shape;
            static create(properties?: zdmatch.v1.ConsumeOutcomesRequest.$Properties): zdmatch.v1.ConsumeOutcomesRequest;
            static encode(m: zdmatch.v1.ConsumeOutcomesRequest.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.ConsumeOutcomesRequest.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.ConsumeOutcomesRequest & zdmatch.v1.ConsumeOutcomesRequest.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.ConsumeOutcomesRequest & zdmatch.v1.ConsumeOutcomesRequest.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.ConsumeOutcomesRequest;
            static toObject(m: zdmatch.v1.ConsumeOutcomesRequest, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace ConsumeOutcomesRequest {
            interface $Properties {
                group?: (string|null);
                consumer?: (string|null);
                max_count?: (number|null);
                wait_ms?: (number|null);
                ack?: (string[]|null);
                redeliver_after_ms?: (number|null);
                tenant?: (string|null);
                $unknowns?: Uint8Array[];
            }
            type $Shape = zdmatch.v1.ConsumeOutcomesRequest.$Properties;
        }

        interface IConsumeOutcomesResponse extends zdmatch.v1.ConsumeOutcomesResponse.$Properties {
        }

        class ConsumeOutcomesResponse {
            constructor(p?: zdmatch.v1.ConsumeOutcomesResponse.$Properties);
            $unknowns?: Uint8Array[];
            outcomes: zdmatch.v1.Outcome.$Properties[];
            static create(properties: zdmatch.v1.ConsumeOutcomesResponse.$Shape): zdmatch.v1.ConsumeOutcomesResponse & zdmatch.v1.ConsumeOutcomesResponse.$Shape;
            static create(properties?: zdmatch.v1.ConsumeOutcomesResponse.$Properties): zdmatch.v1.ConsumeOutcomesResponse;
            static encode(m: zdmatch.v1.ConsumeOutcomesResponse.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.ConsumeOutcomesResponse.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.ConsumeOutcomesResponse & zdmatch.v1.ConsumeOutcomesResponse.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.ConsumeOutcomesResponse & zdmatch.v1.ConsumeOutcomesResponse.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.ConsumeOutcomesResponse;
            static toObject(m: zdmatch.v1.ConsumeOutcomesResponse, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace ConsumeOutcomesResponse {
            interface $Properties {
                outcomes?: (zdmatch.v1.Outcome.$Properties[]|null);
                $unknowns?: Uint8Array[];
            }
            type $Shape = zdmatch.v1.ConsumeOutcomesResponse.$Properties;
        }

        interface IAckOutcomesRequest extends zdmatch.v1.AckOutcomesRequest.$Properties {
        }

        class AckOutcomesRequest {
            constructor(p?: zdmatch.v1.AckOutcomesRequest.$Properties);
            $unknowns?: Uint8Array[];
            group: string;
            outcome_ids: string[];
            tenant: string;
            static create(properties: zdmatch.v1.AckOutcomesRequest.$Shape): zdmatch.v1.AckOutcomesRequest & zdmatch.v1.AckOutcomesRequest.$Shape;
            static create(properties?: zdmatch.v1.AckOutcomesRequest.$Properties): zdmatch.v1.AckOutcomesRequest;
            static encode(m: zdmatch.v1.AckOutcomesRequest.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.AckOutcomesRequest.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.AckOutcomesRequest & zdmatch.v1.AckOutcomesRequest.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.AckOutcomesRequest & zdmatch.v1.AckOutcomesRequest.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.AckOutcomesRequest;
            static toObject(m: zdmatch.v1.AckOutcomesRequest, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace AckOutcomesRequest {
            interface $Properties {
                group?: (string|null);
                outcome_ids?: (string[]|null);
                tenant?: (string|null);
                $unknowns?: Uint8Array[];
            }
            type $Shape = zdmatch.v1.AckOutcomesRequest.$Properties;
        }

        interface IAckOutcomesResponse extends zdmatch.v1.AckOutcomesResponse.$Properties {
        }

        class AckOutcomesResponse {
            constructor(p?: zdmatch.v1.AckOutcomesResponse.$Properties);
            $unknowns?: Uint8Array[];
            acked: number;
            static create(properties: zdmatch.v1.AckOutcomesResponse.$Shape): zdmatch.v1.AckOutcomesResponse & zdmatch.v1.AckOutcomesResponse.$Shape;
            static create(properties?: zdmatch.v1.AckOutcomesResponse.$Properties): zdmatch.v1.AckOutcomesResponse;
            static encode(m: zdmatch.v1.AckOutcomesResponse.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.AckOutcomesResponse.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.AckOutcomesResponse & zdmatch.v1.AckOutcomesResponse.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.AckOutcomesResponse & zdmatch.v1.AckOutcomesResponse.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.AckOutcomesResponse;
            static toObject(m: zdmatch.v1.AckOutcomesResponse, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace AckOutcomesResponse {
            interface $Properties {
                acked?: (number|null);
                $unknowns?: Uint8Array[];
            }
            type $Shape = zdmatch.v1.AckOutcomesResponse.$Properties;
        }

        interface ICancelFlowRequest extends zdmatch.v1.CancelFlowRequest.$Properties {
        }

        class CancelFlowRequest {
            constructor(p?: zdmatch.v1.CancelFlowRequest.$Properties);
            $unknowns?: Uint8Array[];
            tenant: string;
            flow_id: string;
            reason: string;
            static create(properties: zdmatch.v1.CancelFlowRequest.$Shape): zdmatch.v1.CancelFlowRequest & zdmatch.v1.CancelFlowRequest.$Shape;
            static create(properties?: zdmatch.v1.CancelFlowRequest.$Properties): zdmatch.v1.CancelFlowRequest;
            static encode(m: zdmatch.v1.CancelFlowRequest.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.CancelFlowRequest.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.CancelFlowRequest & zdmatch.v1.CancelFlowRequest.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.CancelFlowRequest & zdmatch.v1.CancelFlowRequest.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.CancelFlowRequest;
            static toObject(m: zdmatch.v1.CancelFlowRequest, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace CancelFlowRequest {
            interface $Properties {
                tenant?: (string|null);
                flow_id?: (string|null);
                reason?: (string|null);
                $unknowns?: Uint8Array[];
            }
            type $Shape = zdmatch.v1.CancelFlowRequest.$Properties;
        }

        interface ICancelFlowResponse extends zdmatch.v1.CancelFlowResponse.$Properties {
        }

        class CancelFlowResponse {
            constructor(p?: zdmatch.v1.CancelFlowResponse.$Properties);
            $unknowns?: Uint8Array[];
            cancelled_queued: number;
            cancelled_running: number;
            static create(properties: zdmatch.v1.CancelFlowResponse.$Shape): zdmatch.v1.CancelFlowResponse & zdmatch.v1.CancelFlowResponse.$Shape;
            static create(properties?: zdmatch.v1.CancelFlowResponse.$Properties): zdmatch.v1.CancelFlowResponse;
            static encode(m: zdmatch.v1.CancelFlowResponse.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.CancelFlowResponse.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.CancelFlowResponse & zdmatch.v1.CancelFlowResponse.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.CancelFlowResponse & zdmatch.v1.CancelFlowResponse.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.CancelFlowResponse;
            static toObject(m: zdmatch.v1.CancelFlowResponse, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace CancelFlowResponse {
            interface $Properties {
                cancelled_queued?: (number|null);
                cancelled_running?: (number|null);
                $unknowns?: Uint8Array[];
            }
            type $Shape = zdmatch.v1.CancelFlowResponse.$Properties;
        }

        interface IDescribeQueuesRequest extends zdmatch.v1.DescribeQueuesRequest.$Properties {
        }

        class DescribeQueuesRequest {
            constructor(p?: zdmatch.v1.DescribeQueuesRequest.$Properties);
            $unknowns?: Uint8Array[];
            tenant: string;
            flow_type: string;
            static create(properties: zdmatch.v1.DescribeQueuesRequest.$Shape): zdmatch.v1.DescribeQueuesRequest & zdmatch.v1.DescribeQueuesRequest.$Shape;
            static create(properties?: zdmatch.v1.DescribeQueuesRequest.$Properties): zdmatch.v1.DescribeQueuesRequest;
            static encode(m: zdmatch.v1.DescribeQueuesRequest.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.DescribeQueuesRequest.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.DescribeQueuesRequest & zdmatch.v1.DescribeQueuesRequest.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.DescribeQueuesRequest & zdmatch.v1.DescribeQueuesRequest.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.DescribeQueuesRequest;
            static toObject(m: zdmatch.v1.DescribeQueuesRequest, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace DescribeQueuesRequest {
            interface $Properties {
                tenant?: (string|null);
                flow_type?: (string|null);
                $unknowns?: Uint8Array[];
            }
            type $Shape = zdmatch.v1.DescribeQueuesRequest.$Properties;
        }

        interface IQueueInfo extends zdmatch.v1.QueueInfo.$Properties {
        }

        class QueueInfo {
            constructor(p?: zdmatch.v1.QueueInfo.$Properties);
            $unknowns?: Uint8Array[];
            tenant: string;
            flow_type: string;
            step_type: string;
            ready: number;
            delayed: number;
            oldest_ready_at_ms: number;
            running: number;
            static create(properties: zdmatch.v1.QueueInfo.$Shape): zdmatch.v1.QueueInfo & zdmatch.v1.QueueInfo.$Shape;
            static create(properties?: zdmatch.v1.QueueInfo.$Properties): zdmatch.v1.QueueInfo;
            static encode(m: zdmatch.v1.QueueInfo.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.QueueInfo.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.QueueInfo & zdmatch.v1.QueueInfo.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.QueueInfo & zdmatch.v1.QueueInfo.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.QueueInfo;
            static toObject(m: zdmatch.v1.QueueInfo, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace QueueInfo {
            interface $Properties {
                tenant?: (string|null);
                flow_type?: (string|null);
                step_type?: (string|null);
                ready?: (number|null);
                delayed?: (number|null);
                oldest_ready_at_ms?: (number|null);
                running?: (number|null);
                $unknowns?: Uint8Array[];
            }
            type $Shape = zdmatch.v1.QueueInfo.$Properties;
        }

        interface IDescribeQueuesResponse extends zdmatch.v1.DescribeQueuesResponse.$Properties {
        }

        class DescribeQueuesResponse {
            constructor(p?: zdmatch.v1.DescribeQueuesResponse.$Properties);
            $unknowns?: Uint8Array[];
            queues: zdmatch.v1.QueueInfo.$Properties[];
            static create(properties: zdmatch.v1.DescribeQueuesResponse.$Shape): zdmatch.v1.DescribeQueuesResponse & zdmatch.v1.DescribeQueuesResponse.$Shape;
            static create(properties?: zdmatch.v1.DescribeQueuesResponse.$Properties): zdmatch.v1.DescribeQueuesResponse;
            static encode(m: zdmatch.v1.DescribeQueuesResponse.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.DescribeQueuesResponse.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.DescribeQueuesResponse & zdmatch.v1.DescribeQueuesResponse.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.DescribeQueuesResponse & zdmatch.v1.DescribeQueuesResponse.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.DescribeQueuesResponse;
            static toObject(m: zdmatch.v1.DescribeQueuesResponse, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace DescribeQueuesResponse {
            interface $Properties {
                queues?: (zdmatch.v1.QueueInfo.$Properties[]|null);
                $unknowns?: Uint8Array[];
            }
            type $Shape = zdmatch.v1.DescribeQueuesResponse.$Properties;
        }

        interface IDescribeClusterRequest extends zdmatch.v1.DescribeClusterRequest.$Properties {
        }

        class DescribeClusterRequest {
            constructor(p?: zdmatch.v1.DescribeClusterRequest.$Properties);
            $unknowns?: Uint8Array[];
            static create(properties: zdmatch.v1.DescribeClusterRequest.$Shape): zdmatch.v1.DescribeClusterRequest & zdmatch.v1.DescribeClusterRequest.$Shape;
            static create(properties?: zdmatch.v1.DescribeClusterRequest.$Properties): zdmatch.v1.DescribeClusterRequest;
            static encode(m: zdmatch.v1.DescribeClusterRequest.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.DescribeClusterRequest.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.DescribeClusterRequest & zdmatch.v1.DescribeClusterRequest.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.DescribeClusterRequest & zdmatch.v1.DescribeClusterRequest.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.DescribeClusterRequest;
            static toObject(m: zdmatch.v1.DescribeClusterRequest, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace DescribeClusterRequest {
            interface $Properties {
                $unknowns?: Uint8Array[];
            }
            type $Shape = zdmatch.v1.DescribeClusterRequest.$Properties;
        }

        interface INodeInfo extends zdmatch.v1.NodeInfo.$Properties {
        }

        class NodeInfo {
            constructor(p?: zdmatch.v1.NodeInfo.$Properties);
            $unknowns?: Uint8Array[];
            node_id: string;
            address: string;
            last_heartbeat_ms: number;
            owned_partitions: number;
            live: boolean;
            static create(properties: zdmatch.v1.NodeInfo.$Shape): zdmatch.v1.NodeInfo & zdmatch.v1.NodeInfo.$Shape;
            static create(properties?: zdmatch.v1.NodeInfo.$Properties): zdmatch.v1.NodeInfo;
            static encode(m: zdmatch.v1.NodeInfo.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.NodeInfo.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.NodeInfo & zdmatch.v1.NodeInfo.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.NodeInfo & zdmatch.v1.NodeInfo.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.NodeInfo;
            static toObject(m: zdmatch.v1.NodeInfo, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace NodeInfo {
            interface $Properties {
                node_id?: (string|null);
                address?: (string|null);
                last_heartbeat_ms?: (number|null);
                owned_partitions?: (number|null);
                live?: (boolean|null);
                $unknowns?: Uint8Array[];
            }
            type $Shape = zdmatch.v1.NodeInfo.$Properties;
        }

        interface IPartitionInfo extends zdmatch.v1.PartitionInfo.$Properties {
        }

        class PartitionInfo {
            constructor(p?: zdmatch.v1.PartitionInfo.$Properties);
            $unknowns?: Uint8Array[];
            partition: number;
            owner: string;
            epoch: number;
            static create(properties: zdmatch.v1.PartitionInfo.$Shape): zdmatch.v1.PartitionInfo & zdmatch.v1.PartitionInfo.$Shape;
            static create(properties?: zdmatch.v1.PartitionInfo.$Properties): zdmatch.v1.PartitionInfo;
            static encode(m: zdmatch.v1.PartitionInfo.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.PartitionInfo.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.PartitionInfo & zdmatch.v1.PartitionInfo.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.PartitionInfo & zdmatch.v1.PartitionInfo.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.PartitionInfo;
            static toObject(m: zdmatch.v1.PartitionInfo, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace PartitionInfo {
            interface $Properties {
                partition?: (number|null);
                owner?: (string|null);
                epoch?: (number|null);
                $unknowns?: Uint8Array[];
            }
            type $Shape = zdmatch.v1.PartitionInfo.$Properties;
        }

        interface IDescribeClusterResponse extends zdmatch.v1.DescribeClusterResponse.$Properties {
        }

        class DescribeClusterResponse {
            constructor(p?: zdmatch.v1.DescribeClusterResponse.$Properties);
            $unknowns?: Uint8Array[];
            partitions: number;
            nodes: zdmatch.v1.NodeInfo.$Properties[];
            partition_owners: zdmatch.v1.PartitionInfo.$Properties[];
            static create(properties: zdmatch.v1.DescribeClusterResponse.$Shape): zdmatch.v1.DescribeClusterResponse & zdmatch.v1.DescribeClusterResponse.$Shape;
            static create(properties?: zdmatch.v1.DescribeClusterResponse.$Properties): zdmatch.v1.DescribeClusterResponse;
            static encode(m: zdmatch.v1.DescribeClusterResponse.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.DescribeClusterResponse.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.DescribeClusterResponse & zdmatch.v1.DescribeClusterResponse.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.DescribeClusterResponse & zdmatch.v1.DescribeClusterResponse.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.DescribeClusterResponse;
            static toObject(m: zdmatch.v1.DescribeClusterResponse, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace DescribeClusterResponse {
            interface $Properties {
                partitions?: (number|null);
                nodes?: (zdmatch.v1.NodeInfo.$Properties[]|null);
                partition_owners?: (zdmatch.v1.PartitionInfo.$Properties[]|null);
                $unknowns?: Uint8Array[];
            }
            type $Shape = zdmatch.v1.DescribeClusterResponse.$Properties;
        }

        interface IListOutcomeGroupsRequest extends zdmatch.v1.ListOutcomeGroupsRequest.$Properties {
        }

        class ListOutcomeGroupsRequest {
            constructor(p?: zdmatch.v1.ListOutcomeGroupsRequest.$Properties);
            $unknowns?: Uint8Array[];
            static create(properties: zdmatch.v1.ListOutcomeGroupsRequest.$Shape): zdmatch.v1.ListOutcomeGroupsRequest & zdmatch.v1.ListOutcomeGroupsRequest.$Shape;
            static create(properties?: zdmatch.v1.ListOutcomeGroupsRequest.$Properties): zdmatch.v1.ListOutcomeGroupsRequest;
            static encode(m: zdmatch.v1.ListOutcomeGroupsRequest.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.ListOutcomeGroupsRequest.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.ListOutcomeGroupsRequest & zdmatch.v1.ListOutcomeGroupsRequest.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.ListOutcomeGroupsRequest & zdmatch.v1.ListOutcomeGroupsRequest.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.ListOutcomeGroupsRequest;
            static toObject(m: zdmatch.v1.ListOutcomeGroupsRequest, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace ListOutcomeGroupsRequest {
            interface $Properties {
                $unknowns?: Uint8Array[];
            }
            type $Shape = zdmatch.v1.ListOutcomeGroupsRequest.$Properties;
        }

        interface IOutcomeGroupInfo extends zdmatch.v1.OutcomeGroupInfo.$Properties {
        }

        class OutcomeGroupInfo {
            constructor(p?: zdmatch.v1.OutcomeGroupInfo.$Properties);
            $unknowns?: Uint8Array[];
            tenant: string;
            group: string;
            lag: number;
            pending: number;
            consumers: number;
            idle_ms: number;
            partitions: number;
            registered: boolean;
            static create(properties: zdmatch.v1.OutcomeGroupInfo.$Shape): zdmatch.v1.OutcomeGroupInfo & zdmatch.v1.OutcomeGroupInfo.$Shape;
            static create(properties?: zdmatch.v1.OutcomeGroupInfo.$Properties): zdmatch.v1.OutcomeGroupInfo;
            static encode(m: zdmatch.v1.OutcomeGroupInfo.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.OutcomeGroupInfo.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.OutcomeGroupInfo & zdmatch.v1.OutcomeGroupInfo.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.OutcomeGroupInfo & zdmatch.v1.OutcomeGroupInfo.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.OutcomeGroupInfo;
            static toObject(m: zdmatch.v1.OutcomeGroupInfo, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace OutcomeGroupInfo {
            interface $Properties {
                tenant?: (string|null);
                group?: (string|null);
                lag?: (number|null);
                pending?: (number|null);
                consumers?: (number|null);
                idle_ms?: (number|null);
                partitions?: (number|null);
                registered?: (boolean|null);
                $unknowns?: Uint8Array[];
            }
            type $Shape = zdmatch.v1.OutcomeGroupInfo.$Properties;
        }

        interface IListOutcomeGroupsResponse extends zdmatch.v1.ListOutcomeGroupsResponse.$Properties {
        }

        class ListOutcomeGroupsResponse {
            constructor(p?: zdmatch.v1.ListOutcomeGroupsResponse.$Properties);
            $unknowns?: Uint8Array[];
            groups: zdmatch.v1.OutcomeGroupInfo.$Properties[];
            static create(properties: zdmatch.v1.ListOutcomeGroupsResponse.$Shape): zdmatch.v1.ListOutcomeGroupsResponse & zdmatch.v1.ListOutcomeGroupsResponse.$Shape;
            static create(properties?: zdmatch.v1.ListOutcomeGroupsResponse.$Properties): zdmatch.v1.ListOutcomeGroupsResponse;
            static encode(m: zdmatch.v1.ListOutcomeGroupsResponse.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.ListOutcomeGroupsResponse.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.ListOutcomeGroupsResponse & zdmatch.v1.ListOutcomeGroupsResponse.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.ListOutcomeGroupsResponse & zdmatch.v1.ListOutcomeGroupsResponse.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.ListOutcomeGroupsResponse;
            static toObject(m: zdmatch.v1.ListOutcomeGroupsResponse, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace ListOutcomeGroupsResponse {
            interface $Properties {
                groups?: (zdmatch.v1.OutcomeGroupInfo.$Properties[]|null);
                $unknowns?: Uint8Array[];
            }
            type $Shape = zdmatch.v1.ListOutcomeGroupsResponse.$Properties;
        }

        interface IDropOutcomeGroupRequest extends zdmatch.v1.DropOutcomeGroupRequest.$Properties {
        }

        class DropOutcomeGroupRequest {
            constructor(p?: zdmatch.v1.DropOutcomeGroupRequest.$Properties);
            $unknowns?: Uint8Array[];
            tenant: string;
            group: string;
            force: boolean;
            static create(properties: zdmatch.v1.DropOutcomeGroupRequest.$Shape): zdmatch.v1.DropOutcomeGroupRequest & zdmatch.v1.DropOutcomeGroupRequest.$Shape;
            static create(properties?: zdmatch.v1.DropOutcomeGroupRequest.$Properties): zdmatch.v1.DropOutcomeGroupRequest;
            static encode(m: zdmatch.v1.DropOutcomeGroupRequest.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.DropOutcomeGroupRequest.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.DropOutcomeGroupRequest & zdmatch.v1.DropOutcomeGroupRequest.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.DropOutcomeGroupRequest & zdmatch.v1.DropOutcomeGroupRequest.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.DropOutcomeGroupRequest;
            static toObject(m: zdmatch.v1.DropOutcomeGroupRequest, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace DropOutcomeGroupRequest {
            interface $Properties {
                tenant?: (string|null);
                group?: (string|null);
                force?: (boolean|null);
                $unknowns?: Uint8Array[];
            }
            type $Shape = zdmatch.v1.DropOutcomeGroupRequest.$Properties;
        }

        interface IDropOutcomeGroupResponse extends zdmatch.v1.DropOutcomeGroupResponse.$Properties {
        }

        class DropOutcomeGroupResponse {
            constructor(p?: zdmatch.v1.DropOutcomeGroupResponse.$Properties);
            $unknowns?: Uint8Array[];
            partitions: number;
            pending: number;
            static create(properties: zdmatch.v1.DropOutcomeGroupResponse.$Shape): zdmatch.v1.DropOutcomeGroupResponse & zdmatch.v1.DropOutcomeGroupResponse.$Shape;
            static create(properties?: zdmatch.v1.DropOutcomeGroupResponse.$Properties): zdmatch.v1.DropOutcomeGroupResponse;
            static encode(m: zdmatch.v1.DropOutcomeGroupResponse.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.DropOutcomeGroupResponse.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.DropOutcomeGroupResponse & zdmatch.v1.DropOutcomeGroupResponse.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.DropOutcomeGroupResponse & zdmatch.v1.DropOutcomeGroupResponse.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.DropOutcomeGroupResponse;
            static toObject(m: zdmatch.v1.DropOutcomeGroupResponse, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace DropOutcomeGroupResponse {
            interface $Properties {
                partitions?: (number|null);
                pending?: (number|null);
                $unknowns?: Uint8Array[];
            }
            type $Shape = zdmatch.v1.DropOutcomeGroupResponse.$Properties;
        }

        interface IInvokeRpcRequest extends zdmatch.v1.InvokeRpcRequest.$Properties {
        }

        class InvokeRpcRequest {
            constructor(p?: zdmatch.v1.InvokeRpcRequest.$Properties);
            $unknowns?: Uint8Array[];
            tenant: string;
            flow_id: string;
            flow_type: string;
            rpc_name: string;
            input: Uint8Array;
            sticky_worker_id: string;
            timeout_ms: number;
            static create(properties: zdmatch.v1.InvokeRpcRequest.$Shape): zdmatch.v1.InvokeRpcRequest & zdmatch.v1.InvokeRpcRequest.$Shape;
            static create(properties?: zdmatch.v1.InvokeRpcRequest.$Properties): zdmatch.v1.InvokeRpcRequest;
            static encode(m: zdmatch.v1.InvokeRpcRequest.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.InvokeRpcRequest.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.InvokeRpcRequest & zdmatch.v1.InvokeRpcRequest.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.InvokeRpcRequest & zdmatch.v1.InvokeRpcRequest.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.InvokeRpcRequest;
            static toObject(m: zdmatch.v1.InvokeRpcRequest, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace InvokeRpcRequest {
            interface $Properties {
                tenant?: (string|null);
                flow_id?: (string|null);
                flow_type?: (string|null);
                rpc_name?: (string|null);
                input?: (Uint8Array|null);
                sticky_worker_id?: (string|null);
                timeout_ms?: (number|null);
                $unknowns?: Uint8Array[];
            }
            type $Shape = zdmatch.v1.InvokeRpcRequest.$Properties;
        }

        interface IInvokeRpcResponse extends zdmatch.v1.InvokeRpcResponse.$Properties {
        }

        class InvokeRpcResponse {
            constructor(p?: zdmatch.v1.InvokeRpcResponse.$Properties);
            $unknowns?: Uint8Array[];
            output?: (Uint8Array|null);
            failure?: (zdmatch.v1.Failure.$Properties|null);
            app_worker_id: string;
            result?: ("output"|"failure");
            static create(properties: zdmatch.v1.InvokeRpcResponse.$Shape): zdmatch.v1.InvokeRpcResponse & zdmatch.v1.InvokeRpcResponse.$Shape;
            static create(properties?: zdmatch.v1.InvokeRpcResponse.$Properties): zdmatch.v1.InvokeRpcResponse;
            static encode(m: zdmatch.v1.InvokeRpcResponse.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.InvokeRpcResponse.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.InvokeRpcResponse & zdmatch.v1.InvokeRpcResponse.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.InvokeRpcResponse & zdmatch.v1.InvokeRpcResponse.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.InvokeRpcResponse;
            static toObject(m: zdmatch.v1.InvokeRpcResponse, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace InvokeRpcResponse {
            interface $Properties {
                output?: (Uint8Array|null);
                failure?: (zdmatch.v1.Failure.$Properties|null);
                app_worker_id?: (string|null);
                result?: ("output"|"failure");
                $unknowns?: Uint8Array[];
            }
            type $Shape = {
              output?: Uint8Array|null;
              failure?: zdmatch.v1.Failure.$Shape|null;
              app_worker_id?: string|null;
              $unknowns?: Uint8Array[];
            } & (
              ({ result?: undefined; output?: null; failure?: null }|{ result?: "output"; output: Uint8Array; failure?: null }|{ result?: "failure"; output?: null; failure: zdmatch.v1.Failure.$Shape })
            );
        }

        interface IRegister extends zdmatch.v1.Register.$Properties {
        }

        class Register {
            constructor(p?: zdmatch.v1.Register.$Properties);
            $unknowns?: Uint8Array[];
            protocol_version: number;
            tenant: string;
            app_worker_id: string;
            flow_types: string[];
            slot_kind: zdmatch.v1.SlotKind;
            task_limit: number;
            sdk_name: string;
            sdk_version: string;
            accepts_task_after_ack: boolean;
            accepts_task_in_ack: boolean;
            static create(properties: zdmatch.v1.Register.$Shape): zdmatch.v1.Register & zdmatch.v1.Register.$Shape;
            static create(properties?: zdmatch.v1.Register.$Properties): zdmatch.v1.Register;
            static encode(m: zdmatch.v1.Register.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.Register.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.Register & zdmatch.v1.Register.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.Register & zdmatch.v1.Register.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.Register;
            static toObject(m: zdmatch.v1.Register, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace Register {
            interface $Properties {
                protocol_version?: (number|null);
                tenant?: (string|null);
                app_worker_id?: (string|null);
                flow_types?: (string[]|null);
                slot_kind?: (zdmatch.v1.SlotKind|null);
                task_limit?: (number|null);
                sdk_name?: (string|null);
                sdk_version?: (string|null);
                accepts_task_after_ack?: (boolean|null);
                accepts_task_in_ack?: (boolean|null);
                $unknowns?: Uint8Array[];
            }
            type $Shape = zdmatch.v1.Register.$Properties;
        }

        interface IRegistered extends zdmatch.v1.Registered.$Properties {
        }

        class Registered {
            constructor(p?: zdmatch.v1.Registered.$Properties);
            $unknowns?: Uint8Array[];
            max_concurrent_tasks_cap: number;
            ping_interval_ms: number;
            server_protocol_version: number;
            node_id: string;
            stream_id: string;
            static create(properties: zdmatch.v1.Registered.$Shape): zdmatch.v1.Registered & zdmatch.v1.Registered.$Shape;
            static create(properties?: zdmatch.v1.Registered.$Properties): zdmatch.v1.Registered;
            static encode(m: zdmatch.v1.Registered.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.Registered.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.Registered & zdmatch.v1.Registered.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.Registered & zdmatch.v1.Registered.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.Registered;
            static toObject(m: zdmatch.v1.Registered, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace Registered {
            interface $Properties {
                max_concurrent_tasks_cap?: (number|null);
                ping_interval_ms?: (number|null);
                server_protocol_version?: (number|null);
                node_id?: (string|null);
                stream_id?: (string|null);
                $unknowns?: Uint8Array[];
            }
            type $Shape = zdmatch.v1.Registered.$Properties;
        }

        interface IStepTask extends zdmatch.v1.StepTask.$Properties {
        }

        class StepTask {
            constructor(p?: zdmatch.v1.StepTask.$Properties);
            $unknowns?: Uint8Array[];
            task_token: string;
            task_id: string;
            tenant: string;
            flow_id: string;
            flow_type: string;
            step_type: string;
            step_execution_id: string;
            attempt: number;
            input: Uint8Array;
            enqueued_at_ms: number;
            started_at_ms: number;
            method_timeout_ms: number;
            heartbeat_timeout_ms: number;
            flow_deadline_ms: number;
            static create(properties: zdmatch.v1.StepTask.$Shape): zdmatch.v1.StepTask & zdmatch.v1.StepTask.$Shape;
            static create(properties?: zdmatch.v1.StepTask.$Properties): zdmatch.v1.StepTask;
            static encode(m: zdmatch.v1.StepTask.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.StepTask.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.StepTask & zdmatch.v1.StepTask.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.StepTask & zdmatch.v1.StepTask.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.StepTask;
            static toObject(m: zdmatch.v1.StepTask, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace StepTask {
            interface $Properties {
                task_token?: (string|null);
                task_id?: (string|null);
                tenant?: (string|null);
                flow_id?: (string|null);
                flow_type?: (string|null);
                step_type?: (string|null);
                step_execution_id?: (string|null);
                attempt?: (number|null);
                input?: (Uint8Array|null);
                enqueued_at_ms?: (number|null);
                started_at_ms?: (number|null);
                method_timeout_ms?: (number|null);
                heartbeat_timeout_ms?: (number|null);
                flow_deadline_ms?: (number|null);
                $unknowns?: Uint8Array[];
            }
            type $Shape = zdmatch.v1.StepTask.$Properties;
        }

        interface IRpcTask extends zdmatch.v1.RpcTask.$Properties {
        }

        class RpcTask {
            constructor(p?: zdmatch.v1.RpcTask.$Properties);
            $unknowns?: Uint8Array[];
            task_token: string;
            tenant: string;
            flow_id: string;
            flow_type: string;
            rpc_name: string;
            input: Uint8Array;
            deadline_ms: number;
            static create(properties: zdmatch.v1.RpcTask.$Shape): zdmatch.v1.RpcTask & zdmatch.v1.RpcTask.$Shape;
            static create(properties?: zdmatch.v1.RpcTask.$Properties): zdmatch.v1.RpcTask;
            static encode(m: zdmatch.v1.RpcTask.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.RpcTask.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.RpcTask & zdmatch.v1.RpcTask.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.RpcTask & zdmatch.v1.RpcTask.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.RpcTask;
            static toObject(m: zdmatch.v1.RpcTask, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace RpcTask {
            interface $Properties {
                task_token?: (string|null);
                tenant?: (string|null);
                flow_id?: (string|null);
                flow_type?: (string|null);
                rpc_name?: (string|null);
                input?: (Uint8Array|null);
                deadline_ms?: (number|null);
                $unknowns?: Uint8Array[];
            }
            type $Shape = zdmatch.v1.RpcTask.$Properties;
        }

        interface ICancel extends zdmatch.v1.Cancel.$Properties {
        }

        class Cancel {
            constructor(p?: zdmatch.v1.Cancel.$Properties);
            $unknowns?: Uint8Array[];
            task_token: string;
            reason: string;
            static create(properties: zdmatch.v1.Cancel.$Shape): zdmatch.v1.Cancel & zdmatch.v1.Cancel.$Shape;
            static create(properties?: zdmatch.v1.Cancel.$Properties): zdmatch.v1.Cancel;
            static encode(m: zdmatch.v1.Cancel.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.Cancel.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.Cancel & zdmatch.v1.Cancel.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.Cancel & zdmatch.v1.Cancel.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.Cancel;
            static toObject(m: zdmatch.v1.Cancel, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace Cancel {
            interface $Properties {
                task_token?: (string|null);
                reason?: (string|null);
                $unknowns?: Uint8Array[];
            }
            type $Shape = zdmatch.v1.Cancel.$Properties;
        }

        interface IPing extends zdmatch.v1.Ping.$Properties {
        }

        class Ping {
            constructor(p?: zdmatch.v1.Ping.$Properties);
            $unknowns?: Uint8Array[];
            sent_at_ms: number;
            static create(properties: zdmatch.v1.Ping.$Shape): zdmatch.v1.Ping & zdmatch.v1.Ping.$Shape;
            static create(properties?: zdmatch.v1.Ping.$Properties): zdmatch.v1.Ping;
            static encode(m: zdmatch.v1.Ping.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.Ping.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.Ping & zdmatch.v1.Ping.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.Ping & zdmatch.v1.Ping.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.Ping;
            static toObject(m: zdmatch.v1.Ping, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace Ping {
            interface $Properties {
                sent_at_ms?: (number|null);
                $unknowns?: Uint8Array[];
            }
            type $Shape = zdmatch.v1.Ping.$Properties;
        }

        interface IPong extends zdmatch.v1.Pong.$Properties {
        }

        class Pong {
            constructor(p?: zdmatch.v1.Pong.$Properties);
            $unknowns?: Uint8Array[];
            sent_at_ms: number;
            static create(properties: zdmatch.v1.Pong.$Shape): zdmatch.v1.Pong & zdmatch.v1.Pong.$Shape;
            static create(properties?: zdmatch.v1.Pong.$Properties): zdmatch.v1.Pong;
            static encode(m: zdmatch.v1.Pong.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.Pong.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.Pong & zdmatch.v1.Pong.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.Pong & zdmatch.v1.Pong.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.Pong;
            static toObject(m: zdmatch.v1.Pong, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace Pong {
            interface $Properties {
                sent_at_ms?: (number|null);
                $unknowns?: Uint8Array[];
            }
            type $Shape = zdmatch.v1.Pong.$Properties;
        }

        interface IReconnect extends zdmatch.v1.Reconnect.$Properties {
        }

        class Reconnect {
            constructor(p?: zdmatch.v1.Reconnect.$Properties);
            $unknowns?: Uint8Array[];
            reason: string;
            static create(properties: zdmatch.v1.Reconnect.$Shape): zdmatch.v1.Reconnect & zdmatch.v1.Reconnect.$Shape;
            static create(properties?: zdmatch.v1.Reconnect.$Properties): zdmatch.v1.Reconnect;
            static encode(m: zdmatch.v1.Reconnect.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.Reconnect.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.Reconnect & zdmatch.v1.Reconnect.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.Reconnect & zdmatch.v1.Reconnect.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.Reconnect;
            static toObject(m: zdmatch.v1.Reconnect, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace Reconnect {
            interface $Properties {
                reason?: (string|null);
                $unknowns?: Uint8Array[];
            }
            type $Shape = zdmatch.v1.Reconnect.$Properties;
        }

        enum ResultVerdict {
            RESULT_VERDICT_UNSPECIFIED = 0,
            ACCEPTED = 1,
            REFUSED_CANCELLED = 2,
            REFUSED_STALE = 3,
            REFUSED_INVALID = 4
        }

        interface IResultAck extends zdmatch.v1.ResultAck.$Properties {
        }

        class ResultAck {
            constructor(p?: zdmatch.v1.ResultAck.$Properties);
            $unknowns?: Uint8Array[];
            task_token: string;
            verdict: zdmatch.v1.ResultVerdict;
            error: string;
            retry_scheduled: boolean;
            next_task?: (zdmatch.v1.StepTask.$Properties|null);
            static create(properties: zdmatch.v1.ResultAck.$Shape): zdmatch.v1.ResultAck & zdmatch.v1.ResultAck.$Shape;
            static create(properties?: zdmatch.v1.ResultAck.$Properties): zdmatch.v1.ResultAck;
            static encode(m: zdmatch.v1.ResultAck.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.ResultAck.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.ResultAck & zdmatch.v1.ResultAck.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.ResultAck & zdmatch.v1.ResultAck.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.ResultAck;
            static toObject(m: zdmatch.v1.ResultAck, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace ResultAck {
            interface $Properties {
                task_token?: (string|null);
                verdict?: (zdmatch.v1.ResultVerdict|null);
                error?: (string|null);
                retry_scheduled?: (boolean|null);
                next_task?: (zdmatch.v1.StepTask.$Properties|null);
                $unknowns?: Uint8Array[];
            }
            type $Shape = zdmatch.v1.ResultAck.$Properties;
        }

        interface IStepResult extends zdmatch.v1.StepResult.$Properties {
        }

        class StepResult {
            constructor(p?: zdmatch.v1.StepResult.$Properties);
            $unknowns?: Uint8Array[];
            task_token: string;
            output?: (Uint8Array|null);
            failure?: (zdmatch.v1.Failure.$Properties|null);
            result?: ("output"|"failure");
            static create(properties: zdmatch.v1.StepResult.$Shape): zdmatch.v1.StepResult & zdmatch.v1.StepResult.$Shape;
            static create(properties?: zdmatch.v1.StepResult.$Properties): zdmatch.v1.StepResult;
            static encode(m: zdmatch.v1.StepResult.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.StepResult.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.StepResult & zdmatch.v1.StepResult.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.StepResult & zdmatch.v1.StepResult.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.StepResult;
            static toObject(m: zdmatch.v1.StepResult, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace StepResult {
            interface $Properties {
                task_token?: (string|null);
                output?: (Uint8Array|null);
                failure?: (zdmatch.v1.Failure.$Properties|null);
                result?: ("output"|"failure");
                $unknowns?: Uint8Array[];
            }
            type $Shape = {
              task_token?: string|null;
              output?: Uint8Array|null;
              failure?: zdmatch.v1.Failure.$Shape|null;
              $unknowns?: Uint8Array[];
            } & (
              ({ result?: undefined; output?: null; failure?: null }|{ result?: "output"; output: Uint8Array; failure?: null }|{ result?: "failure"; output?: null; failure: zdmatch.v1.Failure.$Shape })
            );
        }

        interface IRpcResult extends zdmatch.v1.RpcResult.$Properties {
        }

        class RpcResult {
            constructor(p?: zdmatch.v1.RpcResult.$Properties);
            $unknowns?: Uint8Array[];
            task_token: string;
            output?: (Uint8Array|null);
            failure?: (zdmatch.v1.Failure.$Properties|null);
            result?: ("output"|"failure");
            static create(properties: zdmatch.v1.RpcResult.$Shape): zdmatch.v1.RpcResult & zdmatch.v1.RpcResult.$Shape;
            static create(properties?: zdmatch.v1.RpcResult.$Properties): zdmatch.v1.RpcResult;
            static encode(m: zdmatch.v1.RpcResult.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.RpcResult.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.RpcResult & zdmatch.v1.RpcResult.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.RpcResult & zdmatch.v1.RpcResult.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.RpcResult;
            static toObject(m: zdmatch.v1.RpcResult, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace RpcResult {
            interface $Properties {
                task_token?: (string|null);
                output?: (Uint8Array|null);
                failure?: (zdmatch.v1.Failure.$Properties|null);
                result?: ("output"|"failure");
                $unknowns?: Uint8Array[];
            }
            type $Shape = {
              task_token?: string|null;
              output?: Uint8Array|null;
              failure?: zdmatch.v1.Failure.$Shape|null;
              $unknowns?: Uint8Array[];
            } & (
              ({ result?: undefined; output?: null; failure?: null }|{ result?: "output"; output: Uint8Array; failure?: null }|{ result?: "failure"; output?: null; failure: zdmatch.v1.Failure.$Shape })
            );
        }

        enum DeclineReason {
            DECLINE_REASON_UNSPECIFIED = 0,
            UNKNOWN_TYPE = 1,
            NO_CAPACITY = 2
        }

        interface IDecline extends zdmatch.v1.Decline.$Properties {
        }

        class Decline {
            constructor(p?: zdmatch.v1.Decline.$Properties);
            $unknowns?: Uint8Array[];
            task_token: string;
            reason: zdmatch.v1.DeclineReason;
            static create(properties: zdmatch.v1.Decline.$Shape): zdmatch.v1.Decline & zdmatch.v1.Decline.$Shape;
            static create(properties?: zdmatch.v1.Decline.$Properties): zdmatch.v1.Decline;
            static encode(m: zdmatch.v1.Decline.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.Decline.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.Decline & zdmatch.v1.Decline.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.Decline & zdmatch.v1.Decline.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.Decline;
            static toObject(m: zdmatch.v1.Decline, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace Decline {
            interface $Properties {
                task_token?: (string|null);
                reason?: (zdmatch.v1.DeclineReason|null);
                $unknowns?: Uint8Array[];
            }
            type $Shape = zdmatch.v1.Decline.$Properties;
        }

        interface IHeartbeat extends zdmatch.v1.Heartbeat.$Properties {
        }

        class Heartbeat {
            constructor(p?: zdmatch.v1.Heartbeat.$Properties);
            $unknowns?: Uint8Array[];
            task_token: string;
            details: Uint8Array;
            static create(properties: zdmatch.v1.Heartbeat.$Shape): zdmatch.v1.Heartbeat & zdmatch.v1.Heartbeat.$Shape;
            static create(properties?: zdmatch.v1.Heartbeat.$Properties): zdmatch.v1.Heartbeat;
            static encode(m: zdmatch.v1.Heartbeat.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.Heartbeat.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.Heartbeat & zdmatch.v1.Heartbeat.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.Heartbeat & zdmatch.v1.Heartbeat.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.Heartbeat;
            static toObject(m: zdmatch.v1.Heartbeat, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace Heartbeat {
            interface $Properties {
                task_token?: (string|null);
                details?: (Uint8Array|null);
                $unknowns?: Uint8Array[];
            }
            type $Shape = zdmatch.v1.Heartbeat.$Properties;
        }

        interface IWorkerFrame extends zdmatch.v1.WorkerFrame.$Properties {
        }

        class WorkerFrame {
            constructor(p?: zdmatch.v1.WorkerFrame.$Properties);
            $unknowns?: Uint8Array[];
            register?: (zdmatch.v1.Register.$Properties|null);
            step_result?: (zdmatch.v1.StepResult.$Properties|null);
            rpc_result?: (zdmatch.v1.RpcResult.$Properties|null);
            decline?: (zdmatch.v1.Decline.$Properties|null);
            heartbeat?: (zdmatch.v1.Heartbeat.$Properties|null);
            pong?: (zdmatch.v1.Pong.$Properties|null);
            frame?: ("register"|"step_result"|"rpc_result"|"decline"|"heartbeat"|"pong");
            static create(properties: zdmatch.v1.WorkerFrame.$Shape): zdmatch.v1.WorkerFrame & zdmatch.v1.WorkerFrame.$Shape;
            static create(properties?: zdmatch.v1.WorkerFrame.$Properties): zdmatch.v1.WorkerFrame;
            static encode(m: zdmatch.v1.WorkerFrame.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.WorkerFrame.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.WorkerFrame & zdmatch.v1.WorkerFrame.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.WorkerFrame & zdmatch.v1.WorkerFrame.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.WorkerFrame;
            static toObject(m: zdmatch.v1.WorkerFrame, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace WorkerFrame {
            interface $Properties {
                register?: (zdmatch.v1.Register.$Properties|null);
                step_result?: (zdmatch.v1.StepResult.$Properties|null);
                rpc_result?: (zdmatch.v1.RpcResult.$Properties|null);
                decline?: (zdmatch.v1.Decline.$Properties|null);
                heartbeat?: (zdmatch.v1.Heartbeat.$Properties|null);
                pong?: (zdmatch.v1.Pong.$Properties|null);
                frame?: ("register"|"step_result"|"rpc_result"|"decline"|"heartbeat"|"pong");
                $unknowns?: Uint8Array[];
            }
            type $Shape = {
              register?: zdmatch.v1.Register.$Shape|null;
              step_result?: zdmatch.v1.StepResult.$Shape|null;
              rpc_result?: zdmatch.v1.RpcResult.$Shape|null;
              decline?: zdmatch.v1.Decline.$Shape|null;
              heartbeat?: zdmatch.v1.Heartbeat.$Shape|null;
              pong?: zdmatch.v1.Pong.$Shape|null;
              $unknowns?: Uint8Array[];
            } & (
              ({ frame?: undefined; register?: null; step_result?: null; rpc_result?: null; decline?: null; heartbeat?: null; pong?: null }|{ frame?: "register"; register: zdmatch.v1.Register.$Shape; step_result?: null; rpc_result?: null; decline?: null; heartbeat?: null; pong?: null }|{ frame?: "step_result"; register?: null; step_result: zdmatch.v1.StepResult.$Shape; rpc_result?: null; decline?: null; heartbeat?: null; pong?: null }|{ frame?: "rpc_result"; register?: null; step_result?: null; rpc_result: zdmatch.v1.RpcResult.$Shape; decline?: null; heartbeat?: null; pong?: null }|{ frame?: "decline"; register?: null; step_result?: null; rpc_result?: null; decline: zdmatch.v1.Decline.$Shape; heartbeat?: null; pong?: null }|{ frame?: "heartbeat"; register?: null; step_result?: null; rpc_result?: null; decline?: null; heartbeat: zdmatch.v1.Heartbeat.$Shape; pong?: null }|{ frame?: "pong"; register?: null; step_result?: null; rpc_result?: null; decline?: null; heartbeat?: null; pong: zdmatch.v1.Pong.$Shape })
            );
        }

        interface IServerFrame extends zdmatch.v1.ServerFrame.$Properties {
        }

        class ServerFrame {
            constructor(p?: zdmatch.v1.ServerFrame.$Properties);
            $unknowns?: Uint8Array[];
            registered?: (zdmatch.v1.Registered.$Properties|null);
            step_task?: (zdmatch.v1.StepTask.$Properties|null);
            rpc_task?: (zdmatch.v1.RpcTask.$Properties|null);
            cancel?: (zdmatch.v1.Cancel.$Properties|null);
            ping?: (zdmatch.v1.Ping.$Properties|null);
            reconnect?: (zdmatch.v1.Reconnect.$Properties|null);
            result_ack?: (zdmatch.v1.ResultAck.$Properties|null);
            frame?: ("registered"|"step_task"|"rpc_task"|"cancel"|"ping"|"reconnect"|"result_ack");
            static create(properties: zdmatch.v1.ServerFrame.$Shape): zdmatch.v1.ServerFrame & zdmatch.v1.ServerFrame.$Shape;
            static create(properties?: zdmatch.v1.ServerFrame.$Properties): zdmatch.v1.ServerFrame;
            static encode(m: zdmatch.v1.ServerFrame.$Properties, w?: $protobuf.Writer): $protobuf.Writer;
            static encodeDelimited(message: zdmatch.v1.ServerFrame.$Properties, writer?: $protobuf.Writer): $protobuf.Writer;
            static decode(r: ($protobuf.Reader|Uint8Array), l?: number): zdmatch.v1.ServerFrame & zdmatch.v1.ServerFrame.$Shape;
            static decodeDelimited(reader: ($protobuf.Reader|Uint8Array)): zdmatch.v1.ServerFrame & zdmatch.v1.ServerFrame.$Shape;
            static verify(m: { [k: string]: any }): (string|null);
            static fromObject(d: { [k: string]: any }): zdmatch.v1.ServerFrame;
            static toObject(m: zdmatch.v1.ServerFrame, o?: $protobuf.IConversionOptions): { [k: string]: any };
            toJSON(): { [k: string]: any };
            static getTypeUrl(prefix?: string): string;
        }

        namespace ServerFrame {
            interface $Properties {
                registered?: (zdmatch.v1.Registered.$Properties|null);
                step_task?: (zdmatch.v1.StepTask.$Properties|null);
                rpc_task?: (zdmatch.v1.RpcTask.$Properties|null);
                cancel?: (zdmatch.v1.Cancel.$Properties|null);
                ping?: (zdmatch.v1.Ping.$Properties|null);
                reconnect?: (zdmatch.v1.Reconnect.$Properties|null);
                result_ack?: (zdmatch.v1.ResultAck.$Properties|null);
                frame?: ("registered"|"step_task"|"rpc_task"|"cancel"|"ping"|"reconnect"|"result_ack");
                $unknowns?: Uint8Array[];
            }
            type $Shape = {
              registered?: zdmatch.v1.Registered.$Shape|null;
              step_task?: zdmatch.v1.StepTask.$Shape|null;
              rpc_task?: zdmatch.v1.RpcTask.$Shape|null;
              cancel?: zdmatch.v1.Cancel.$Shape|null;
              ping?: zdmatch.v1.Ping.$Shape|null;
              reconnect?: zdmatch.v1.Reconnect.$Shape|null;
              result_ack?: zdmatch.v1.ResultAck.$Shape|null;
              $unknowns?: Uint8Array[];
            } & (
              ({ frame?: undefined; registered?: null; step_task?: null; rpc_task?: null; cancel?: null; ping?: null; reconnect?: null; result_ack?: null }|{ frame?: "registered"; registered: zdmatch.v1.Registered.$Shape; step_task?: null; rpc_task?: null; cancel?: null; ping?: null; reconnect?: null; result_ack?: null }|{ frame?: "step_task"; registered?: null; step_task: zdmatch.v1.StepTask.$Shape; rpc_task?: null; cancel?: null; ping?: null; reconnect?: null; result_ack?: null }|{ frame?: "rpc_task"; registered?: null; step_task?: null; rpc_task: zdmatch.v1.RpcTask.$Shape; cancel?: null; ping?: null; reconnect?: null; result_ack?: null }|{ frame?: "cancel"; registered?: null; step_task?: null; rpc_task?: null; cancel: zdmatch.v1.Cancel.$Shape; ping?: null; reconnect?: null; result_ack?: null }|{ frame?: "ping"; registered?: null; step_task?: null; rpc_task?: null; cancel?: null; ping: zdmatch.v1.Ping.$Shape; reconnect?: null; result_ack?: null }|{ frame?: "reconnect"; registered?: null; step_task?: null; rpc_task?: null; cancel?: null; ping?: null; reconnect: zdmatch.v1.Reconnect.$Shape; result_ack?: null }|{ frame?: "result_ack"; registered?: null; step_task?: null; rpc_task?: null; cancel?: null; ping?: null; reconnect?: null; result_ack: zdmatch.v1.ResultAck.$Shape })
            );
        }
    }
}
