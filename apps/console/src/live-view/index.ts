// The live view, kept in this folder: everything the console knows about the
// relay's protocol (libs/contracts/src/lib/live-view.ts) is here.
export { createLiveView, NATIVE_PROMPTS_TIP, type LiveViewHandle, type LiveViewOptions } from './live-view.view';
export type { LiveViewMode } from './live-view.protocol';
