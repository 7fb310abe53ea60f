/** Pipelines the api tests send, as YAML text. */

/** One gate, then a command stage: starts waiting at the gate. */
export const GATE_THEN_COMMAND = `name: approve-then-run
stages:
  - id: approve
    kind: gate
    message: Ship it?
  - id: ship
    command: "true"
edges:
  - from: approve
    to: ship
`;

/** Only a gate: the run ends when the gate is answered. */
export const GATE_ONLY = `name: gate-only
stages:
  - id: approve
    kind: gate
    message: Go?
`;

/** Valid, with one warning (an unknown YAML tag): refused when strict. */
export const WITH_WARNING = `name: tagged
stages:
  - id: a
    command: !shell echo a
`;

/** Two errors: stages is not a list, and an unknown key. */
export const INVALID = `name: broken
stages: 3
foo: 1
`;
