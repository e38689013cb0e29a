// A tag36h11 AprilTag's printed cells as texels for the 3-D view (scene.ts), kept free of
// three.js so node tests it alone (tests/browser/plot_ticks.test.mjs).

/** Cells along the tag's side, its white margin included. */
export const TAG_CELLS = 10;

/**
 * RGBA texels, TAG_CELLS × TAG_CELLS, of `cells` as the ground sends them (web_protocol.cc):
 * 100 characters row by row from the tag's top, '0' black, '1' white. The rows come out
 * bottom first, as a texture's first row lies at v = 0: on a plane whose v runs along the
 * body's +y, the tag's top row lands at its +y edge, as the site prints it on the body's +z
 * face. Throws on anything but 100 '0's and '1's (nothing half-drawn).
 */
export function tagTexels(cells: string): Uint8Array<ArrayBuffer> {
  if (cells.length !== TAG_CELLS * TAG_CELLS || /[^01]/.test(cells)) {
    throw new Error(`tag cells: ${cells.length} characters; must be ${TAG_CELLS * TAG_CELLS} of '0' and '1'`);
  }
  const texels = new Uint8Array(4 * TAG_CELLS * TAG_CELLS);
  for (let row = 0; row < TAG_CELLS; ++row) {
    const textureRow = TAG_CELLS - 1 - row;
    for (let col = 0; col < TAG_CELLS; ++col) {
      const v = cells[row * TAG_CELLS + col] === "1" ? 255 : 0;
      texels.set([v, v, v, 255], 4 * (textureRow * TAG_CELLS + col));
    }
  }
  return texels;
}
