import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";

// The terminal is built into dist/terminal, which the API server serves at `/`; `npm run dev:terminal`
// serves it with hot reload and sends /v1 to a server started with `npm start`.
export default defineConfig({
  root: fileURLToPath(new URL("./src/terminal", import.meta.url)),
  plugins: [react()],
  logLevel: "warn",
  build: {
    outDir: fileURLToPath(new URL("./dist/terminal", import.meta.url)),
    emptyOutDir: true,
    target: "es2022",
    chunkSizeWarningLimit: 1024,
  },
  server: { proxy: { "/v1": process.env.CROSSFILL_URL ?? "http://127.0.0.1:8080" } },
});
