import { pictureRect, toPictureFraction, wheelPixels } from './frame-geometry';

describe('canvas to picture fractions', () => {
  const picture = { width: 1280, height: 720 };

  it('gives the fraction of the picture as shown, whatever size it is shown at', () => {
    // Shown at half size, 40 px from the left and 100 px down the console page.
    const box = { left: 40, top: 100, width: 640, height: 360 };
    expect(toPictureFraction(box, picture, 40, 100)).toEqual({ x: 0, y: 0 });
    expect(toPictureFraction(box, picture, 360, 280)).toEqual({ x: 0.5, y: 0.5 });
    expect(toPictureFraction(box, picture, 680, 460)).toEqual({ x: 1, y: 1 });
    expect(toPictureFraction(box, picture, 40 + 123.45, 100)).toEqual({ x: 0.1929, y: 0 });
    // The same point of the page at another size is the same fraction.
    expect(toPictureFraction({ left: 0, top: 0, width: 1920, height: 1080 }, picture, 960, 270)).toEqual({ x: 0.5, y: 0.25 });
  });

  it('leaves out the letterbox when the box is not the picture\'s shape', () => {
    // A 1000 × 1000 box shows the 16:9 picture 1000 × 562.5, 218.75 px down.
    const box = { left: 0, top: 0, width: 1000, height: 1000 };
    expect(pictureRect(box, picture)).toEqual({ left: 0, top: 218.75, width: 1000, height: 562.5 });
    expect(toPictureFraction(box, picture, 500, 500)).toEqual({ x: 0.5, y: 0.5 });
    expect(toPictureFraction(box, picture, 500, 100)).toBeUndefined();
  });

  it('ignores points outside the picture and a picture with no size', () => {
    const box = { left: 0, top: 0, width: 640, height: 360 };
    expect(toPictureFraction(box, picture, -1, 10)).toBeUndefined();
    expect(toPictureFraction(box, picture, 10, 361)).toBeUndefined();
    expect(toPictureFraction({ ...box, width: 0 }, picture, 1, 1)).toBeUndefined();
    expect(toPictureFraction(box, { width: 0, height: 0 }, 1, 1)).toBeUndefined();
    expect(toPictureFraction(box, picture, Number.NaN, 1)).toBeUndefined();
  });

  it('turns wheel lines and pages into CSS pixels, bounded as the relay takes them', () => {
    expect(wheelPixels(0, 3, 1, 720, 10_000)).toEqual({ deltaX: 0, deltaY: 48 });
    expect(wheelPixels(0, 1, 2, 720, 10_000)).toEqual({ deltaX: 0, deltaY: 720 });
    expect(wheelPixels(-2.26, 100, 0, 720, 10_000)).toEqual({ deltaX: -2.3, deltaY: 100 });
    expect(wheelPixels(-0, 1e9, 0, 720, 10_000)).toEqual({ deltaX: 0, deltaY: 10_000 });
    expect(Object.is(wheelPixels(-0.01, 0, 0, 720, 10_000).deltaX, -0)).toBe(false);
  });
});
