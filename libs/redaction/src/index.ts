export { redactText } from './lib/redact-text';
export { redactValue } from './lib/redact-value';
export type { RedactionKind } from './lib/redaction-marker';
export { isMarker as isRedactionMarker, redactionMarker } from './lib/redaction-marker';
export type { NameContext } from './lib/secret-names';
export { secretKindOfName } from './lib/secret-names';
