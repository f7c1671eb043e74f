/**
 * Kafka's framing over Vert.x: a {@code NetServer}, size-prefixed frames checked against {@code
 * socket.request.max.bytes} before anything is allocated for them, and per-connection ordering of
 * responses while up to {@code KafkaConnection.IN_FLIGHT_MAX} requests are in flight.
 *
 * <p>Threads: everything here runs on the connection's event loop. It knows nothing of Kafka's APIs
 * or error codes; a {@link io.tidelog.broker.network.RequestProcessor} turns frames into responses,
 * which are written with kafka-clients' own {@code Send} (record data as sendfile regions).
 */
package io.tidelog.broker.network;
