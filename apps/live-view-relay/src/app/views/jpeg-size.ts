/**
 * Width and height of a JPEG, from its start-of-frame marker; `undefined` when the
 * bytes are not a JPEG. The first picture of a view is a screenshot, whose geometry
 * comes from its size (a screencast frame carries its own).
 */
export function jpegSize(jpeg: Buffer): { width: number; height: number } | undefined {
  if (jpeg.length < 4 || jpeg[0] !== 0xff || jpeg[1] !== 0xd8) return undefined;
  let i = 2;
  while (i + 9 < jpeg.length) {
    if (jpeg[i] !== 0xff) return undefined;
    const marker = jpeg[i + 1];
    // Fill bytes before a marker.
    if (marker === 0xff) {
      i += 1;
      continue;
    }
    const length = jpeg.readUInt16BE(i + 2);
    // SOF0..SOF15, except DHT (C4), JPG (C8) and DAC (CC).
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return { height: jpeg.readUInt16BE(i + 5), width: jpeg.readUInt16BE(i + 7) };
    }
    i += 2 + length;
  }
  return undefined;
}
