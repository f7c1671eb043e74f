/**
 * The Tidelog operator: {@link io.tidelog.operator.TidelogOperator} starts java-operator-sdk with
 * the {@code Cluster} and {@code Topic} reconcilers, Lease-based leader election, health endpoints
 * and Prometheus metrics. Server-side apply is off, in production as in the tests: fabric8's mock
 * API server, which the tests run, does not implement it (see DEVELOPERS.md).
 */
package io.tidelog.operator;
