/**
 * Where a pointer on the canvas lands on the picture. The relay takes
 * fractions of the picture as shown (`x` 0 at the left to 1 at the right, `y`
 * 0 at the top to 1 at the bottom) and maps them to the page itself with the
 * geometry of its newest frame (docs/live-view.md, "Mapping a point to the
 * page"), so the console may show the picture at any size.
 */
export interface Box {
  left: number;
  top: number;
  width: number;
  height: number;
}

export interface PictureSize {
  width: number;
  height: number;
}

/**
 * The rectangle the picture fills inside the canvas's box: the whole box when
 * their aspect ratios agree (the console's CSS keeps them equal), else the
 * centred, letterboxed area `object-fit: contain` would give.
 */
export function pictureRect(box: Box, picture: PictureSize): Box | undefined {
  if (box.width <= 0 || box.height <= 0 || picture.width <= 0 || picture.height <= 0) return undefined;
  const scale = Math.min(box.width / picture.width, box.height / picture.height);
  const width = picture.width * scale;
  const height = picture.height * scale;
  return { left: box.left + (box.width - width) / 2, top: box.top + (box.height - height) / 2, width, height };
}

/** The fractions (0..1, rounded to 1/10000) of a client point on the picture; undefined outside it. */
export function toPictureFraction(box: Box, picture: PictureSize, clientX: number, clientY: number): { x: number; y: number } | undefined {
  const rect = pictureRect(box, picture);
  if (!rect) return undefined;
  const fx = (clientX - rect.left) / rect.width;
  const fy = (clientY - rect.top) / rect.height;
  if (!(fx >= 0 && fy >= 0 && fx <= 1 && fy <= 1)) return undefined;
  return { x: round4(fx), y: round4(fy) };
}

/**
 * Wheel deltas in CSS pixels, as the relay takes them: lines count 16 px and
 * pages a picture's height, as browsers scroll them; bounded to ±`max`.
 */
export function wheelPixels(deltaX: number, deltaY: number, deltaMode: number, pageHeight: number, max: number): { deltaX: number; deltaY: number } {
  const factor = deltaMode === 1 ? 16 : deltaMode === 2 ? pageHeight : 1;
  const bound = (n: number) => Math.max(-max, Math.min(max, Math.round(n * factor * 10) / 10)) || 0; // no -0 on the wire
  return { deltaX: bound(deltaX), deltaY: bound(deltaY) };
}

function round4(n: number): number {
  return Math.round(n * 10_000) / 10_000;
}
