import { pino, type LoggerOptions, type Logger as Pino } from 'pino'
import type { Config } from '../core/config/config.js'

/**
 * How every process logs: JSON lines (for log collectors) unless the stream
 * is a terminal, where pino-pretty makes them readable by a person.
 * `fd` 2 sends the log to stderr (the CLI, whose stdout is its report).
 */
export function loggerOptions (level: Config['LOG_LEVEL'], fd: 1 | 2 = 1): LoggerOptions {
  const terminal = (fd === 1 ? process.stdout : process.stderr).isTTY
  return {
    level,
    ...(terminal ? { transport: { target: 'pino-pretty', options: { destination: fd, translateTime: 'HH:MM:ss.l', ignore: 'pid,hostname' } } } : {})
  }
}

/** The logger of a process that is not a Fastify server (the index worker, the CLI). */
export function createLogger (level: Config['LOG_LEVEL'], fd: 1 | 2 = 1): Pino {
  const options = loggerOptions(level, fd)
  return options.transport !== undefined ? pino(options) : pino(options, pino.destination(fd))
}
