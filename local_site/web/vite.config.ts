import { defineConfig } from "vite";

// Relative asset URLs so the ground can serve dist/ from any root; the dev server proxies
// /ws and /api to a ground running on 8080 (override with TETHER_GROUND=host:port). The
// ground refuses a WebSocket whose Origin is not its own address, so the proxy presents it.
const ground = process.env.TETHER_GROUND ?? "127.0.0.1:8080";
export default defineConfig({
  base: "./",
  build: { outDir: "dist", emptyOutDir: true, chunkSizeWarningLimit: 1024 },
  server: {
    proxy: {
      "/ws": { target: `ws://${ground}`, ws: true, changeOrigin: true, headers: { origin: `http://${ground}` } },
      "/api": { target: `http://${ground}` },
    },
  },
});
