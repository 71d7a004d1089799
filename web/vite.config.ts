import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

// The server serves the built app at /app/ (see web.go). `npm run dev`
// serves it from the sources on Vite's dev server
// (http://localhost:5173/app/) and passes /query, HTTP and websocket, to
// the Go server: http://127.0.0.1:8080, or FEED_SERVER.
export default defineConfig({
  base: '/app/',
  plugins: [react()],
  server: {
    proxy: {
      '/query': { target: process.env.FEED_SERVER ?? 'http://127.0.0.1:8080', ws: true },
    },
  },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    sourcemap: false,
  },
});
