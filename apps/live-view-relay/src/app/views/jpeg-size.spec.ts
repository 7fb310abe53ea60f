import { jpegSize } from './jpeg-size';

/** A minimal baseline JPEG header: SOI, an APP0 segment, SOF0 with the size. */
function header(width: number, height: number): Buffer {
  const app0 = Buffer.from([0xff, 0xe0, 0x00, 0x10, ...Buffer.from('JFIF\0'), 1, 1, 0, 0, 1, 0, 1, 0, 0]);
  const sof0 = Buffer.from([0xff, 0xc0, 0x00, 0x11, 8, height >> 8, height & 0xff, width >> 8, width & 0xff, 3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1]);
  return Buffer.concat([Buffer.from([0xff, 0xd8]), app0, sof0, Buffer.from([0xff, 0xd9])]);
}

describe('jpegSize', () => {
  it('reads the size from the start-of-frame marker', () => {
    expect(jpegSize(header(1280, 720))).toEqual({ width: 1280, height: 720 });
    expect(jpegSize(header(780, 493))).toEqual({ width: 780, height: 493 });
  });

  it('refuses what is not a JPEG', () => {
    expect(jpegSize(Buffer.from('\x89PNG\r\n'))).toBeUndefined();
    expect(jpegSize(Buffer.alloc(0))).toBeUndefined();
    expect(jpegSize(Buffer.from([0xff, 0xd8, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00]))).toBeUndefined();
  });
});
