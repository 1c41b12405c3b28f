/**
 * The OpenTelemetry SDK as an app registers it, for the trace tests: a tracer provider with the
 * in-memory span exporter, a meter provider with a reader the test collects from, and a context
 * manager on AsyncLocalStorage (what the Node SDK registers), so spans nest across awaits.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { type Context, type ContextManager, context, metrics, ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { MeterProvider, MetricReader, type ResourceMetrics } from '@opentelemetry/sdk-metrics';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';

class AsyncLocalContextManager implements ContextManager {
  readonly #storage = new AsyncLocalStorage<Context>();
  active(): Context {
    return this.#storage.getStore() ?? ROOT_CONTEXT;
  }
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    ctx: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    return this.#storage.run(ctx, () => fn.apply(thisArg, args));
  }
  bind<T>(_ctx: Context, target: T): T {
    return target;
  }
  enable(): this {
    return this;
  }
  disable(): this {
    this.#storage.disable();
    return this;
  }
}

/** A reader collected on demand. */
class CollectingReader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

/** The registered SDK: the spans ended so far, the metrics now, and how to unregister it. */
export interface RegisteredSdk {
  spans(): ReadableSpan[];
  reset(): void;
  collect(): Promise<ResourceMetrics>;
  unregister(): Promise<void>;
}

/** Registers a tracer provider, a meter provider and a context manager globally. */
export function registerSdk(): RegisteredSdk {
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const reader = new CollectingReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  context.setGlobalContextManager(new AsyncLocalContextManager());
  trace.setGlobalTracerProvider(tracerProvider);
  metrics.setGlobalMeterProvider(meterProvider);
  return {
    spans: () => exporter.getFinishedSpans(),
    reset: () => exporter.reset(),
    collect: async () => (await reader.collect()).resourceMetrics,
    unregister: async () => {
      trace.disable();
      metrics.disable();
      context.disable();
      await tracerProvider.shutdown();
      await meterProvider.shutdown();
    },
  };
}

/** One metric point: its name, attributes and value (a number, or a histogram's count and sum). */
export interface MetricPoint {
  name: string;
  attributes: Record<string, unknown>;
  value: unknown;
}

/** Every point of the package's metrics. */
export function metricPoints(resourceMetrics: ResourceMetrics, scope: string): MetricPoint[] {
  return resourceMetrics.scopeMetrics
    .filter((s) => s.scope.name === scope)
    .flatMap((s) =>
      s.metrics.flatMap((m) =>
        (m.dataPoints as { attributes: Record<string, unknown>; value: unknown }[]).map((p) => ({
          name: m.descriptor.name,
          attributes: p.attributes,
          value: p.value,
        })),
      ),
    );
}

/** The spans as an indented outline of names, children under their parent, in start order. */
export function outline(spans: readonly ReadableSpan[]): string[] {
  const ids = new Set(spans.map((s) => s.spanContext().spanId));
  const sorted = [...spans].sort((a, b) => hrNumber(a.startTime) - hrNumber(b.startTime));
  const lines: string[] = [];
  const walk = (parent: string | undefined, depth: number): void => {
    for (const span of sorted) {
      const p = span.parentSpanContext?.spanId;
      const own = p !== undefined && ids.has(p) ? p : undefined;
      if (own !== parent) continue;
      lines.push(`${'  '.repeat(depth)}${span.name}`);
      walk(span.spanContext().spanId, depth + 1);
    }
  };
  walk(undefined, 0);
  return lines;
}

function hrNumber([s, ns]: [number, number]): number {
  return s * 1e9 + ns;
}
