/**
 * The User reconciler: a {@code User} resource kept as a Kafka user of its Cluster, its SCRAM
 * credential, ACLs and quotas. Depends on {@code api}, {@code brokers} and {@code metrics}.
 */
package io.tidelog.operator.user;
