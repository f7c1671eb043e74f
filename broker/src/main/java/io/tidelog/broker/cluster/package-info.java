/**
 * Cluster metadata behind {@link io.tidelog.broker.cluster.MetadataStore}: topics, their ids,
 * partition counts and config overrides, and producer-id blocks. A single broker keeps it on local
 * disk; issue #4 implements the same interface on etcd.
 */
package io.tidelog.broker.cluster;
