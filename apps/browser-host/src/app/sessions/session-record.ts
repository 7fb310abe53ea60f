/** The registry record's shape and codec are shared with the api and the relay (they read it): see `@stageflow/contracts`. */
export { sessionRecordFromHash, sessionRecordToHash, type BlockedRequest, type SessionRecord } from '@stageflow/contracts';
