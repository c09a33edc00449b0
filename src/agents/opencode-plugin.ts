// git-swarm:generated — written by `git swarm agents install opencode`; `git swarm agents uninstall opencode` removes it.
// Calls `git-swarm-agent-hook opencode <event>` with the payload on stdin and
// uses its answer; any failure (no binary, a timeout, bad output) is ignored,
// so the session never waits on git-swarm more than the 10 s timeout, or
// breaks because of it.
import type { Plugin } from "@opencode-ai/plugin"

// The tools whose calls a guard can refuse before they run: a command.
// (A call's lessons come after it, with its output, for every tool.)
const CALL_TOOLS = new Set(["bash"])

export const GitSwarm: Plugin = async (ctx) => {
  const directory: string | undefined = (ctx as any)?.directory
  const client: any = (ctx as any)?.client
  // Background tasks (opencode's `background: true`) by their child
  // session: their call returned at the launch; the stop is read when the
  // child session goes idle.
  const jobs = new Map<string, any>()
  // The briefing of each main session, from `session-start`, as the promise
  // the system-prompt transform awaits: opencode does not await the `event`
  // hook, so the first model request may come before the answer does.
  const briefings = new Map<string, Promise<string | undefined>>()
  // Sessions that are a subagent's (they have a parent): their lessons come
  // with their task, from `tool.execute.before`, never the main briefing.
  const children = new Set<string>()
  // Tool calls whose end was reported, by session and call: opencode skips
  // `tool.execute.after` for a call that throws, whose end then comes from
  // its tool part turning to `error`; each is reported once.
  const ended = new Set<string>()
  // Each session's agent (`build`, a subagent's `general`…), from opencode's
  // session and message events: it is the role git-swarm shows lessons for.
  const agents = new Map<string, string>()
  const noteAgent = (sessionID: unknown, agent: unknown) => {
    if (typeof sessionID === "string" && typeof agent === "string" && agent) agents.set(sessionID, agent)
  }

  const call = async (event: string, payload: unknown): Promise<any> => {
    try {
      const proc = Bun.spawn(["git-swarm-agent-hook", "opencode", event], {
        cwd: directory,
        stdin: new Blob([JSON.stringify(payload)]),
        stdout: "pipe",
        stderr: "ignore",
        timeout: 10_000,
      })
      const out = (await new Response(proc.stdout).text()).trim()
      await proc.exited
      return out ? JSON.parse(out) : undefined
    } catch {
      return undefined
    }
  }

  const brief = (event: string, sessionID: string): Promise<string | undefined> => {
    const answer = call("session-start", { event, sessionID, agent: agents.get(sessionID) })
      .then((a) => (typeof a?.context === "string" ? a.context : undefined))
      .catch(() => undefined)
    briefings.set(sessionID, answer)
    return answer
  }

  // Whether a session is a main one, from its `session.created`, else from
  // opencode's record of it: a session that cannot be told is not briefed.
  const isMain = async (sessionID: string): Promise<boolean> => {
    if (children.has(sessionID)) return false
    if (briefings.has(sessionID)) return true
    try {
      const res = await client?.session?.get?.({ path: { id: sessionID } })
      const info = res?.data ?? res
      if (typeof info?.parentID === "string" && info.parentID) {
        children.add(sessionID)
        return false
      }
      return info?.id === sessionID
    } catch {
      return false
    }
  }

  // The prompts of opencode's own hidden agents (`title`, `compaction`):
  // their model calls carry the session's id too, and are not the agent's.
  let internal: Promise<string[]> | undefined
  const internalPrompts = (): Promise<string[]> => {
    internal ??= (async () => {
      try {
        const res = await client?.app?.agents?.()
        const list: any[] = Array.isArray(res?.data) ? res.data : Array.isArray(res) ? res : []
        return list
          .filter((a) => ["title", "compaction", "summary"].includes(a?.name))
          .map((a) => a?.prompt)
          .filter((p): p is string => typeof p === "string" && p.trim().length > 0)
      } catch {
        return []
      }
    })()
    return internal
  }
  const isInternal = async (system: unknown[]): Promise<boolean> => {
    const first = system[0]
    if (typeof first !== "string") return false
    return (await internalPrompts()).some((p) => first.startsWith(p))
  }

  // What opencode hands `tool.execute.after`: `{title, output, metadata}` for
  // its own tools, the MCP result (`{content, structuredContent, isError}`)
  // for an MCP tool. Only text content is passed on.
  const result = (output: any) => {
    if (!output || typeof output !== "object") return undefined
    const content = Array.isArray(output.content)
      ? output.content.map((b: any) => (b?.type === "text" ? { type: "text", text: b.text } : { type: b?.type }))
      : undefined
    return {
      title: output.title,
      output: output.output,
      metadata: output.metadata,
      content,
      structuredContent: output.structuredContent,
      isError: output.isError,
    }
  }

  // A tool call that ended by throwing (a failed task, a `read` of a
  // missing file, an MCP error): its part's `error` state is all there is.
  const failed = async (part: any) => {
    const { tool, sessionID, callID } = part ?? {}
    const state = part?.state
    if (typeof tool !== "string" || typeof sessionID !== "string" || typeof callID !== "string") return
    const key = sessionID + "\0" + callID
    if (ended.has(key)) return
    ended.add(key)
    const payload = {
      tool,
      sessionID,
      callID,
      args: state?.input,
      agent: agents.get(sessionID),
      error: typeof state?.error === "string" ? state.error : "the tool call failed",
      output: { metadata: state?.metadata },
    }
    await call(tool === "task" ? "subagent-stop" : "post-tool-use", payload)
  }

  // opencode may call a hook with an input or output missing (a command
  // subtask that failed has no output): every field is read as optional,
  // and no hook lets an error reach opencode.
  const guarded =
    (hook: (input: any, output?: any) => Promise<void>) =>
    async (input: any, output?: any): Promise<void> => {
      try {
        await hook(input, output)
      } catch {}
    }

  return {
    event: guarded(async (input) => {
      const event = input?.event
      const props = event?.properties
      const id = props?.info?.id ?? props?.sessionID
      noteAgent(id, props?.info?.agent)
      if (event?.type === "session.created" && typeof id === "string") {
        if (props?.info?.parentID) children.add(id)
        else if (!briefings.has(id)) brief(event.type, id)
      }
      if (event?.type === "session.compacted" && typeof id === "string" && !children.has(id) && briefings.has(id))
        brief(event.type, id)
      const part = props?.part
      if (event?.type === "message.part.updated" && part?.type === "tool" && part?.state?.status === "error")
        await failed(part)
      const idle = props?.sessionID
      if (event?.type === "session.idle" && typeof idle === "string" && jobs.has(idle)) {
        const job = jobs.get(idle)
        jobs.delete(idle)
        const res = await client?.session?.messages?.({ path: { id: idle } })
        const list: any[] = Array.isArray(res?.data) ? res.data : Array.isArray(res) ? res : []
        const last = [...list].reverse().find((m) => m?.info?.role === "assistant")
        const text = (Array.isArray(last?.parts) ? last.parts : [])
          .filter((p: any) => p?.type === "text" && typeof p?.text === "string")
          .map((p: any) => p.text)
          .join("\n")
        await call("subagent-stop", { ...job, output: { output: text } })
      }
    }),
    "chat.message": guarded(async (input, output) => {
      noteAgent(input?.sessionID ?? output?.message?.sessionID, output?.message?.agent ?? input?.agent)
    }),
    // Awaited by opencode before each model request: the briefing goes
    // into the main agent's own requests, never a subagent's or opencode's
    // title and compaction calls.
    "experimental.chat.system.transform": guarded(async (input, output) => {
      const sessionID = input?.sessionID
      const system = output?.system
      if (typeof sessionID !== "string" || !Array.isArray(system)) return
      if (!(await isMain(sessionID)) || (await isInternal(system))) return
      const text = await (briefings.get(sessionID) ?? brief("session.created", sessionID))
      if (text) system.push(text)
    }),
    // A guard's refusal is the one error thrown to opencode (outside
    // `guarded`): the call does not run, and the model reads the reason.
    "tool.execute.before": async (input: any, output?: any): Promise<void> => {
      let refusal: string | undefined
      await guarded(async (input, output) => {
        const tool = input?.tool
        const args = output?.args
        if (tool === "task") {
          const answer = await call("subagent-start", { tool: "task", sessionID: input.sessionID, callID: input.callID, args })
          if (typeof answer?.prepend === "string" && typeof args?.prompt === "string") {
            args.prompt = answer.prepend + "\n\n" + args.prompt
          }
          return
        }
        if (typeof tool !== "string" || !CALL_TOOLS.has(tool)) return
        const answer = await call("pre-tool-use", {
          tool,
          sessionID: input.sessionID,
          callID: input.callID,
          args,
          agent: agents.get(input.sessionID),
        })
        if (typeof answer?.deny === "string" && answer.deny) {
          refusal = answer.deny
          if (typeof input.sessionID === "string" && typeof input.callID === "string")
            ended.add(input.sessionID + "\0" + input.callID)
        }
      })(input, output)
      if (refusal) throw new Error(refusal)
    },
    "tool.execute.after": guarded(async (input, output) => {
      const tool = input?.tool
      if (typeof tool !== "string") return
      if (typeof input.sessionID === "string" && typeof input.callID === "string")
        ended.add(input.sessionID + "\0" + input.callID)
      // A background task's call returns at its launch, not its end: its
      // final answer is not here, so there are no acks to read yet.
      if (tool === "task" && output?.metadata?.background === true) {
        const child = output.metadata.jobId ?? output.metadata.sessionId
        if (typeof child === "string") {
          jobs.set(child, { tool, sessionID: input.sessionID, callID: input.callID, args: input.args, agent: agents.get(input.sessionID) })
        }
        return
      }
      const payload = {
        tool,
        sessionID: input.sessionID,
        callID: input.callID,
        args: input.args,
        agent: agents.get(input.sessionID),
        output: result(output),
      }
      const answer = await call(tool === "task" ? "subagent-stop" : "post-tool-use", payload)
      // The lessons for this call, with its result: opencode's before-hook
      // has no context to give.
      if (typeof answer?.append === "string" && answer.append && typeof output?.output === "string")
        output.output = output.output + "\n\n" + answer.append
    }),
  }
}
