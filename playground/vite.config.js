import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

// The server serves index.html at / and the rest of dist/ under /graphiql/
// (see playground.go). The Monaco editor's workers are bundled too
// (graphiql/setup-workers/vite), so nothing is fetched from anywhere but
// the server. `npm run dev` serves the page at
// http://localhost:5173/graphiql/ and passes /query to the Go server:
// http://127.0.0.1:8080, or FEED_SERVER.
export default defineConfig({
  base: '/graphiql/',
  plugins: [react()],
  server: {
    proxy: {
      '/query': { target: process.env.FEED_SERVER ?? 'http://127.0.0.1:8080', ws: true },
    },
  },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    chunkSizeWarningLimit: 5000,
    rolldownOptions: {
      onwarn(warning, warn) {
        // GraphiQL's React-compiled modules start with "use no memo", which
        // a bundle cannot keep: harmless, and said once per module.
        if (warning.code === 'MODULE_LEVEL_DIRECTIVE') return;
        warn(warning);
      },
    },
  },
});
