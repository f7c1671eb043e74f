/**
 * The broker's Prometheus metrics (reference: docs/metrics.md).
 *
 * <p>Instruments that count events live with the code that sees the events ({@code
 * protocol.RequestMetrics}, {@code protocol.TopicMetrics}, the listener's connection gauge); state
 * that already exists (replicas, controller, etcd session, log directories, group lag) is read at
 * scrape time by {@link io.tidelog.broker.metrics.BrokerCollector}, so nothing is updated twice.
 * Every broker has its own registry, so several brokers can share a JVM in tests. {@link
 * io.tidelog.broker.metrics.MetricsEndpoint} serves {@code /metrics} off the event loop.
 */
package io.tidelog.broker.metrics;
