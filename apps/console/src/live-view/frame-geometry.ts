/**
 * Where a pointer on the canvas lands on the page. The canvas shows the frame
 * scaled to fit its box (aspect ratio kept, so no letterbox); the relay wants
 * CSS pixels of the frame: `deviceWidth` × `deviceHeight` from the last
 * `frame-meta`. The relay applies `offsetTop` and `pageScaleFactor` itself,
 * since it knows which page and target the frame came from.
 */
export interface Box {
  left: number;
  top: number;
  width: number;
  height: number;
}

export interface FrameSize {
  width: number;
  height: number;
}

/** Frame coordinates of a client point, or undefined outside the picture. Rounded to 0.1 px. */
export function toFramePoint(box: Box, clientX: number, clientY: number, frame: FrameSize): { x: number; y: number } | undefined {
  if (box.width <= 0 || box.height <= 0 || frame.width <= 0 || frame.height <= 0) return undefined;
  const rx = (clientX - box.left) / box.width;
  const ry = (clientY - box.top) / box.height;
  if (rx < 0 || ry < 0 || rx > 1 || ry > 1) return undefined;
  return { x: round1(Math.min(rx * frame.width, frame.width - 0.1)), y: round1(Math.min(ry * frame.height, frame.height - 0.1)) };
}

/** Wheel deltas in pixels: lines count 16 px and pages a frame's height, as browsers scroll them. */
export function wheelPixels(deltaX: number, deltaY: number, deltaMode: number, pageHeight: number): { deltaX: number; deltaY: number } {
  const factor = deltaMode === 1 ? 16 : deltaMode === 2 ? pageHeight : 1;
  return { deltaX: round1(deltaX * factor), deltaY: round1(deltaY * factor) };
}

function round1(n: number): number {
  return Math.round(n * 10) / 10;
}
