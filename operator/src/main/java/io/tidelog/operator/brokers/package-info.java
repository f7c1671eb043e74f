/**
 * How the operator reaches a Cluster's brokers with Kafka's Admin (their address and its client
 * security), and where the replicas it moves go among them. Depends on {@code api} and {@code
 * certificates} only; both reconcilers use it.
 */
package io.tidelog.operator.brokers;
