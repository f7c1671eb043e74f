/**
 * The cluster's metadata in etcd, and the only package that talks to etcd: {@link
 * io.tidelog.broker.cluster.MetadataStore} reads the cluster's prefix, watches it and writes it in
 * transactions (compare-and-swaps, and the controller's writes fenced on its election key); each
 * watch response becomes an immutable {@link io.tidelog.broker.cluster.ClusterImage} and a {@link
 * io.tidelog.broker.cluster.MetadataDelta}, given to the listeners in order. {@link
 * io.tidelog.broker.cluster.BrokerRegistration} keeps the broker's lease; {@link
 * io.tidelog.broker.cluster.Controller}, elected with jetcd's Election, moves leadership when
 * brokers come and go.
 *
 * <p>Threads: the watch calls the listeners on {@code tidelog-etcd}; writes block on etcd, so they
 * run on the metadata executor, the controller's thread or the registration's, never on an event
 * loop. Images are immutable and may be read from any thread.
 */
package io.tidelog.broker.cluster;
