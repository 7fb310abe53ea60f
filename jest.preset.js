const nxPreset = require('@nx/jest/preset').default;

// Unit tests run three projects at a time on small shared machines; Jest's 5 s
// default turned a slow but passing test into a CI failure. A hang still fails.
module.exports = { ...nxPreset, testTimeout: 20_000 };
