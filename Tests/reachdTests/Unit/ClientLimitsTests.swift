import Testing
@testable import reachd

@Suite("Client limits")
struct ClientLimitsTests {
    @Test func theCapComesFromTheDescriptorLimitWithHeadroom() throws {
        let service = try ClientLimits(descriptorLimit: 16384)
        #expect(service.maxClients == 16384 - ClientLimits.reservedDescriptors)
        #expect(service.maxClientsPerUser == 64)
        let tight = try ClientLimits(descriptorLimit: ClientLimits.reservedDescriptors + 32)
        #expect(tight.maxClients == 32)
        #expect(tight.maxClientsPerUser == 8, "a quarter of the cap: four users can never fill it")
        #expect(try ClientLimits(descriptorLimit: 1 << 20).maxClients == ClientLimits.defaultCeiling)
    }

    @Test func explicitLimitsWinButMustFitTheDescriptors() throws {
        let limits = try ClientLimits(descriptorLimit: 1024, maxClients: 100, maxClientsPerUser: 3)
        #expect(limits.maxClients == 100 && limits.maxClientsPerUser == 3)
        #expect(throws: ClientLimitsError.self) { try ClientLimits(descriptorLimit: 128, maxClients: 100) }
        let error = ClientLimitsError.tooManyClientsForLimit(requested: 100, limit: 128)
        #expect(error.description.contains("lower --max-clients or raise the limit"))
        #expect(throws: ClientLimitsError.self) { try ClientLimits(descriptorLimit: 20) }
    }

    @Test func refusalsNameTheLimitAndRootIsNotCountedPerUser() throws {
        let limits = try ClientLimits(descriptorLimit: 1024, maxClients: 10, maxClientsPerUser: 2)
        #expect(limits.refusal(clients: 3, userClients: 1, user: 1000) == nil)
        let perUser = try #require(limits.refusal(clients: 3, userClients: 2, user: 1000))
        #expect(perUser.contains("user 1000 already has 2 connections") && perUser.contains("--max-clients-per-user"))
        #expect(limits.refusal(clients: 3, userClients: 9, user: 0) == nil, "root: only the total counts")
        let total = try #require(limits.refusal(clients: 10, userClients: 0, user: 0))
        #expect(total.contains("at most 10 clients") && total.contains("--max-clients"))
    }
}
