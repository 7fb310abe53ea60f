// The live view, kept in this folder so the relay's protocol can be adjusted
// here alone when it merges (see live-view.protocol.ts and docs/console.md).
export { createLiveView, NATIVE_PROMPTS_TIP, type LiveViewHandle, type LiveViewOptions } from './live-view.view';
export type { LiveViewMode } from './live-view.protocol';
