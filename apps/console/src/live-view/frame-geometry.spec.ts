import { toFramePoint, wheelPixels } from './frame-geometry';

describe('canvas to frame coordinates', () => {
  const frame = { width: 1280, height: 720 };

  it('scales a point on the shown picture to CSS pixels of the frame', () => {
    // The canvas is shown at half size, 40 px from the left and 100 px down the page.
    const box = { left: 40, top: 100, width: 640, height: 360 };
    expect(toFramePoint(box, 40, 100, frame)).toEqual({ x: 0, y: 0 });
    expect(toFramePoint(box, 360, 280, frame)).toEqual({ x: 640, y: 360 });
    expect(toFramePoint(box, 40 + 123.45, 100, frame)).toEqual({ x: 246.9, y: 0 });
    // The far edge stays inside the page.
    expect(toFramePoint(box, 680, 460, frame)).toEqual({ x: 1279.9, y: 719.9 });
  });

  it('ignores points outside the picture and a picture with no size', () => {
    const box = { left: 0, top: 0, width: 640, height: 360 };
    expect(toFramePoint(box, -1, 10, frame)).toBeUndefined();
    expect(toFramePoint(box, 10, 361, frame)).toBeUndefined();
    expect(toFramePoint({ ...box, width: 0 }, 1, 1, frame)).toBeUndefined();
  });

  it('turns wheel lines and pages into pixels', () => {
    expect(wheelPixels(0, 3, 1, 720)).toEqual({ deltaX: 0, deltaY: 48 });
    expect(wheelPixels(0, 1, 2, 720)).toEqual({ deltaX: 0, deltaY: 720 });
    expect(wheelPixels(-2.26, 100, 0, 720)).toEqual({ deltaX: -2.3, deltaY: 100 });
  });
});
