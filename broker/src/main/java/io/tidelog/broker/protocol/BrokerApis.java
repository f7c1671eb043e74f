package io.tidelog.broker.protocol;

/** The handlers of the APIs a broker serves. */
public record BrokerApis(
    MetadataHandler metadata,
    ProduceHandler produce,
    FetchHandler fetch,
    OffsetsHandler offsets,
    TopicAdminHandler topics,
    ConfigsHandler configs,
    ProducerIdHandler producerIds,
    FindCoordinatorHandler coordinators,
    GroupHandler groups,
    TransactionHandler transactions,
    ScramCredentialsHandler scramCredentials,
    AclsHandler acls,
    ClientQuotasHandler quotas,
    LogDirsHandler logDirs,
    DescribeProducersHandler producers,
    ElectLeadersHandler elections,
    ReassignmentsHandler reassignments,
    WriteTxnMarkersHandler txnMarkers) {}
