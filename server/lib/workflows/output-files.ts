/**
 * Step outputs too long to keep in a run's record. The run works with each step's whole output in
 * memory (what flows on to the next step is all of it), but what is kept (the job's state, the
 * events viewers get, the run history) holds a step's output only up to `inlineChars`: a longer one
 * is written as a file of the run's workspace (`outputs/<step>.txt`; a loop's iteration
 * `outputs/<loop>/<n>/<step>.txt`, a child run's `outputs/<step>/child/<step>.txt`), and the state
 * keeps its first 2,000 characters (fewer with a lower limit) and where the file is (`outputFile`). A run resumed after a restart
 * reads its steps' outputs back from their files before it goes on, so later steps still get all
 * of them. The files go with the run (deleted with its record, by the person or the retention).
 *
 * On a crash: a file is written before the state that names it is kept (the same bytes at the same
 * path, so writing it again after a restart is harmless); a state kept never names a file that is
 * not there, unless the run's files were deleted since, and then its steps have their first
 * characters.
 */
import type { WorkflowOutputFile, WorkflowState } from '../../../shared/types/workflow'
import { mapOutputs, outputPathOf, type OutputAt } from '../../../shared/workflow-outputs'

/** The folder of a run's workspace its long outputs are kept in. */
export const RUN_OUTPUTS_FOLDER = 'outputs'

/** Characters of a long output its record keeps, to show what it is. */
export const OUTPUT_PREVIEW_CHARS = 2_000

/** The run's workspace, as far as long outputs need it. */
export interface OutputFileAccess {
  write(path: string, text: string): Promise<void>
  /** The file's text, or null when there is none. */
  read(path: string): Promise<string | null>
}

/** The first characters of a long output (`OUTPUT_PREVIEW_CHARS`, at most `inlineChars`), saying where the rest is. */
export function outputPreview(text: string, file: WorkflowOutputFile, inlineChars = OUTPUT_PREVIEW_CHARS): string {
  return `${text.slice(0, Math.min(OUTPUT_PREVIEW_CHARS, inlineChars))}\n\n[… ${file.chars.toLocaleString('en')} characters in all; the whole output is kept as the run's file ${file.path}]`
}

export class RunOutputFiles {
  /** Files written (or read back) by this process, by path: their length, so an unchanged output is not written again. */
  private readonly written = new Map<string, number>()
  /** Outputs that could not be written (larger than a workspace file may be, say): kept whole in the record, which the run's limits bound. */
  private readonly unwritable = new Set<string>()
  /** Each long output's file as the state names it, by path (its byte length is counted once, not at every viewer update). */
  private readonly described = new Map<string, WorkflowOutputFile>()

  constructor(
    private readonly files: OutputFileAccess,
    private readonly inlineChars: number,
    private readonly onWriteFailed?: (path: string, error: Error) => void,
  ) {}

  /** `state` as it is kept: each output over the inline limit written as a file first, the state holding its start and where it is. */
  async kept(state: WorkflowState): Promise<WorkflowState> {
    const long: Array<{ path: string, text: string }> = []
    mapOutputs(state, RUN_OUTPUTS_FOLDER, (at, path) => {
      if (this.isLong(at, path)) long.push({ path, text: at.output! })
      return undefined
    })
    for (const { path, text } of long) await this.write(path, text)
    return this.shown(state)
  }

  /** `state` as viewers see it between writes: the same, without writing (a file not written yet is by the next write). */
  shown(state: WorkflowState): WorkflowState {
    return mapOutputs(state, RUN_OUTPUTS_FOLDER, (at, path) => {
      if (!this.isLong(at, path)) return undefined
      const outputFile = this.describe(path, at.output!)
      return { output: outputPreview(at.output!, outputFile, this.inlineChars), outputFile }
    })
  }

  /**
   * The run's final output as it is kept: itself when short, else its start and where the whole is
   * (the file of its output step `answerStep`, when it is that step's output, else `outputs/answer.txt`).
   */
  async keptText(text: string, answerStep?: string): Promise<string> {
    if (text.length <= this.inlineChars) return text
    const stepPath = answerStep !== undefined ? `${outputPathOf(RUN_OUTPUTS_FOLDER, answerStep)}.txt` : undefined
    const path = stepPath !== undefined && this.written.get(stepPath) === text.length ? stepPath : `${RUN_OUTPUTS_FOLDER}/answer.txt`
    if (!await this.write(path, text)) return text
    return outputPreview(text, this.describe(path, text), this.inlineChars)
  }

  /** `state` with the whole outputs back from their files (a resumed run's); an output whose file is gone keeps its start. */
  async restored(state: WorkflowState): Promise<WorkflowState> {
    const files = new Map<string, string | null>()
    mapOutputs(state, RUN_OUTPUTS_FOLDER, (at) => {
      if (at.outputFile) files.set(at.outputFile.path, null)
      return undefined
    })
    for (const path of files.keys()) {
      const text = await this.files.read(path)
      files.set(path, text)
      if (text !== null) this.written.set(path, text.length)
    }
    return mapOutputs(state, RUN_OUTPUTS_FOLDER, (at) => {
      const text = at.outputFile ? files.get(at.outputFile.path) : null
      return typeof text === 'string' ? { output: text, outputFile: undefined } : undefined
    })
  }

  /** Whether an output is kept as a file: over the limit, not its kept form already, and writable. */
  private isLong(at: OutputAt, path: string): boolean {
    return at.output !== undefined && at.output.length > this.inlineChars && !at.outputFile && !this.unwritable.has(path)
  }

  /** The file `text` is (or will be) at `path`: its length in characters and bytes. */
  private describe(path: string, text: string): WorkflowOutputFile {
    const known = this.described.get(path)
    if (known?.chars === text.length) return known
    const file = { path, chars: text.length, bytes: Buffer.byteLength(text) }
    this.described.set(path, file)
    return file
  }

  /** Writes `text` at `path` once (the same length again is the same output); false when it could not. */
  private async write(path: string, text: string): Promise<boolean> {
    if (this.written.get(path) === text.length) return true
    try {
      await this.files.write(path, text)
      this.written.set(path, text.length)
      return true
    } catch (error) {
      this.unwritable.add(path)
      this.onWriteFailed?.(path, error as Error)
      return false
    }
  }
}
