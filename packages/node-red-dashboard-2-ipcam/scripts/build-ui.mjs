// Builds the Dashboard 2 widgets (ui/) with Vite, as FlowFuse's third-party widget guide does:
// one UMD bundle per widget in resources/, named after the widget, because Dashboard 2 loads
// `resources/<package>/<widget>.umd.js` and looks for the global of the widget's name. Vue stays
// out of the bundle (Dashboard 2 provides it as window.Vue). The CSS goes inside the bundle: the
// dashboard loads the script only.
import { rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import vue from '@vitejs/plugin-vue';
import { build } from 'vite';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
export const WIDGETS = { 'ipcam-ui-camera': 'ui/camera.ts', 'ipcam-ui-plates': 'ui/plates.ts' };

/** Moves the emitted CSS into the bundle: a <style> added once when the script runs. */
function cssInJs() {
  return {
    name: 'ipcam-css-in-js',
    apply: 'build',
    enforce: 'post',
    generateBundle(_options, bundle) {
      const css = Object.values(bundle).filter((f) => f.type === 'asset' && f.fileName.endsWith('.css'));
      const text = css.map((f) => String(f.source)).join('\n');
      for (const f of css) delete bundle[f.fileName];
      if (text === '') return;
      const inject = `(function(){if(typeof document==='undefined')return;var s=document.createElement('style');s.setAttribute('data-ipcam-ui','');s.textContent=${JSON.stringify(text)};document.head.appendChild(s);})();\n`;
      for (const chunk of Object.values(bundle)) if (chunk.type === 'chunk' && chunk.isEntry) chunk.code = inject + chunk.code;
    },
  };
}

export async function buildWidgets({ release = false } = {}) {
  const outDir = join(root, 'resources');
  for (const [name, entry] of Object.entries(WIDGETS)) {
    rmSync(join(outDir, `${name}.umd.js`), { force: true });
    await build({
      root,
      configFile: false,
      logLevel: 'warn',
      plugins: [vue(), cssInJs()],
      define: { 'process.env.NODE_ENV': JSON.stringify('production') },
      build: {
        outDir,
        emptyOutDir: false,
        sourcemap: false,
        minify: release ? 'esbuild' : false,
        lib: { entry: join(root, entry), name, formats: ['umd'], fileName: () => `${name}.umd.js` },
        rollupOptions: { external: ['vue'], output: { globals: { vue: 'Vue' } } },
      },
    });
  }
  return Object.keys(WIDGETS).map((name) => `resources/${name}.umd.js`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const files = await buildWidgets({ release: process.argv.includes('--release') });
  console.log(`build: Dashboard 2 widgets bundled with Vite from ui/ (${files.join(', ')})`);
}
