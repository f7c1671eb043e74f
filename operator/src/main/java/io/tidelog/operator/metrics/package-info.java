/**
 * The operator's own metrics, next to java-operator-sdk's reconciliation metrics (reference:
 * docs/metrics.md). The reconcilers hand their primary caches to {@link
 * io.tidelog.operator.metrics.ResourceMetrics}, whose gauges read them at scrape time.
 */
package io.tidelog.operator.metrics;
