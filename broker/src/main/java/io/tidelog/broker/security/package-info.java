/**
 * The listeners' security, as Kafka's: TLS engines from PEM or keystore files read again when they
 * change ({@link io.tidelog.broker.security.SslEngineSource}), SASL servers and inter-broker SASL
 * clients from kafka-clients (PLAIN, SCRAM, OAUTHBEARER), SCRAM credentials, and {@link
 * io.tidelog.broker.security.Authorization}: Kafka's StandardAuthorizer over the ACLs in etcd.
 *
 * <p>Threads: engines and authorization are asked from event loops and never block; the files are
 * read again on a worker.
 */
package io.tidelog.broker.security;
