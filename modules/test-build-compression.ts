import { readdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { brotliCompress, constants, gzip } from 'node:zlib'
import { defineNuxtModule } from 'nuxt/kit'

const brotli = promisify(brotliCompress)
const gzipAsync = promisify(gzip)
/** What Nitro compresses: text of at least 1 kB (scripts, styles, JSON, SVG, HTML), never source maps. */
const COMPRESSIBLE = /\.(?:js|mjs|css|json|webmanifest|svg|html|txt|xml)$/i

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true })
  return entries.filter(entry => entry.isFile()).map(entry => join(entry.parentPath, entry.name))
}

/**
 * A test build's public files compressed at quick levels (brotli 5, gzip 6) in place of Nitro's
 * own, which uses brotli's maximum (about ten CPU-seconds of each test build on the 2-core
 * machine). The same files get the same `.br` and `.gz` siblings and are served the same way
 * (tests/e2e/app.test.ts checks it); only the ratio is a little worse. Real builds keep Nitro's.
 */
export default defineNuxtModule({
  meta: { name: 'or3-test-build-compression' },
  setup(_options, nuxt) {
    if (!process.env.OR3_TEST_BUILD_DIR || nuxt.options.dev) return
    nuxt.options.nitro.compressPublicAssets = false
    nuxt.hook('nitro:build:public-assets', async (nitro) => {
      const files = (await filesUnder(nitro.options.output.publicDir)).filter(file => COMPRESSIBLE.test(file))
      await Promise.all(files.map(async (file) => {
        const data = await readFile(file)
        if (data.length < 1024) return
        await writeFile(`${file}.br`, await brotli(data, { params: { [constants.BROTLI_PARAM_QUALITY]: 5, [constants.BROTLI_PARAM_SIZE_HINT]: data.length } }))
        await writeFile(`${file}.gz`, await gzipAsync(data, { level: 6 }))
      }))
    })
  },
})
